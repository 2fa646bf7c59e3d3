"""dateparser as a last resort for a whole date phrase our grammar did not read.

Only used for a ``{when}`` slot that must be a date and nothing else (agenda list,
agenda move), and only when the phrase names a day and a month explicitly
(``REQUIRE_PARTS``). dateparser reads a missing time as midnight, so midnight
counts as "no time"; a date it counted from now ("next week") is none.
"""

from __future__ import annotations

import datetime as dt
import logging

from dateparser.date import DateDataParser

_LOGGER = logging.getLogger(__name__)
_LOCALES = {"en": "en", "pt": "pt"}
_HORIZON = dt.timedelta(days=366 * 5)


class DateparserFallback:
    """dateparser for ``en``/``pt``; the language data is loaded in ``__init__``."""

    def __init__(self, languages: tuple[str, ...]) -> None:
        self._languages = languages
        for lang in languages:
            base = dt.datetime.now(dt.UTC).replace(tzinfo=None)
            self._parser(lang, base).get_date_data("1 1 2026")

    @staticmethod
    def _parser(lang: str, base: dt.datetime) -> DateDataParser:
        return DateDataParser(
            languages=[_LOCALES[lang]],
            settings={
                "PREFER_DATES_FROM": "future",
                "REQUIRE_PARTS": ["day", "month"],
                "RELATIVE_BASE": base,
                "RETURN_AS_TIMEZONE_AWARE": False,
            },
        )

    def parse(
        self, text: str, lang: str, now: dt.datetime
    ) -> tuple[dt.date, dt.time | None] | None:
        """The date (and time, if one was said) of ``text``, or None."""
        base = now.replace(tzinfo=None)
        try:
            data = self._parser(lang, base).get_date_data(text)
        except (ValueError, OverflowError, KeyError) as error:  # dateparser bugs on odd input
            _LOGGER.debug("dateparser failed on %r: %s", text, error)
            return None
        if data.date_obj is None:
            return None
        value = data.date_obj.replace(tzinfo=None)
        if value.time() == base.time() and value != base:
            # counted from now ("next week", "next month": now's time, seconds and all):
            # no day or time that was said; the grammar reads what it can of those
            return None
        today = base.date()
        if not today <= value.date() <= today + _HORIZON:
            return None
        time = value.time()
        return value.date(), (None if time == dt.time(0, 0) else time)
