"""Speech recognition: engines that turn an utterance (16 kHz PCM) into a Transcript."""
