"""Home Assistant integration: MQTT discovery payloads for the main node."""
