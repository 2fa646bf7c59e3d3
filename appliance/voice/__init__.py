"""The voice turn: sessions, end of speech, the two-transcript gate, speech back."""
