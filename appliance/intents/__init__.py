"""Intent parsing: typed or spoken text (English, Brazilian Portuguese) to Commands.

``IntentParser.parse`` turns a request into ``appliance.protocol.commands`` models
using hassil sentence templates (``sentences/<lang>/*.yaml``, partly reused from
home-assistant-intents) and small deterministic slot readers for quantities,
units and dates.
"""

from appliance.intents.handlers import Reason
from appliance.intents.lexicon import LANGUAGES
from appliance.intents.parser import IntentParser, ParseResult, normalize_language
from appliance.intents.templates import TemplateSet, load_templates, templates, vocabulary

__all__ = [
    "LANGUAGES",
    "IntentParser",
    "ParseResult",
    "Reason",
    "TemplateSet",
    "load_templates",
    "normalize_language",
    "templates",
    "vocabulary",
]
