"""English text normalization for speech: written forms -> the words Piper should read."""

from __future__ import annotations

import pytest

from appliance.tts import speakable

CASES: dict[str, list[tuple[str, str]]] = {
    "integers and decimals": [
        ("0", "zero"),
        ("7", "seven"),
        ("12", "twelve"),
        ("21", "twenty-one"),
        ("100", "one hundred"),
        ("2.5", "two point five"),
        ("0.25", "zero point two five"),
        ("2.50", "two point five"),
        ("2.0", "two"),
        ("3.14", "three point one four"),
        ("-4", "minus four"),
        ("007", "seven"),
    ],
    "thousand separators": [
        ("1,000", "one thousand"),
        ("10,000", "ten thousand"),
        ("1,234", "one thousand two hundred and thirty-four"),
        ("1,000,000", "one million"),
        ("2,500.75", "two thousand five hundred point seven five"),
        ("1000", "one thousand"),
    ],
    "lists and long digit strings": [
        ("1,2,3", "one, two, three"),
        ("items 1, 2 and 3", "items one, two and three"),
        ("call 5551234567", "call five five five one two three four five six seven"),
    ],
    "percentages": [
        ("50%", "fifty percent"),
        ("50 %", "fifty percent"),
        ("2.5%", "two point five percent"),
        ("1%", "one percent"),
        ("100% sure", "one hundred percent sure"),
    ],
    "currency": [
        ("$5", "five dollars"),
        ("$1", "one dollar"),
        ("$12.50", "twelve dollars and fifty cents"),
        ("$0.99", "ninety-nine cents"),
        ("$0.01", "one cent"),
        ("$1.01", "one dollar and one cent"),
        ("$1,250", "one thousand two hundred and fifty dollars"),
        ("$1,250.40", "one thousand two hundred and fifty dollars and forty cents"),
        ("US$ 3", "three dollars"),
        ("USD 20", "twenty dollars"),
        ("R$ 12,50", "twelve reais and fifty centavos"),
        ("R$ 1", "one real"),
        ("€5", "five euros"),
        ("€ 1", "one euro"),
        ("12,50 €", "twelve euros and fifty cents"),
        ("10 EUR", "ten euros"),
        ("£2", "two pounds"),
        ("$2.5 million", "two point five million dollars"),
        ("$5k", "five thousand dollars"),
        ("It costs $3.", "It costs three dollars."),
    ],
    "dates": [
        ("2026-12-01", "December first"),
        ("2026-12-02", "December second"),
        ("2026-03-23", "March twenty-third"),
        ("2026-12-01T15:00:00Z", "December first at three p m"),
        ("2026-12-01 09:30", "December first at nine thirty a m"),
        ("on 2026-07-04.", "on July fourth."),
        ("December 1", "December first"),
        ("Dec 1", "December first"),
        ("Dec. 24th", "December twenty-fourth"),
        ("December 1, 2026", "December first, twenty twenty-six"),
        ("1 December", "the first of December"),
        ("1st of December", "the first of December"),
        ("on the 1st of December", "on the first of December"),
        ("12/01/2026", "December first, twenty twenty-six"),
        ("7/4/26", "July fourth, twenty twenty-six"),
        ("Mon, Dec 1", "Monday, December first"),
        ("Fri. 2026-12-04", "Friday December fourth"),
        ("you may 2 times", "you may two times"),
        ("in December 2026", "in December twenty twenty-six"),
        ("Dec. 2026", "December twenty twenty-six"),
    ],
    "times": [
        ("15:00", "three p m"),
        ("3:30 pm", "three thirty p m"),
        ("3:30 PM", "three thirty p m"),
        ("3 pm", "three p m"),
        ("3pm", "three p m"),
        ("10 a.m.", "ten a m."),
        ("at 3 p.m. tomorrow", "at three p m tomorrow"),
        ("9:05", "nine oh five a m"),
        ("09:45", "nine forty-five a m"),
        ("00:00", "midnight"),
        ("12:00", "noon"),
        ("12:30", "twelve thirty p m"),
        ("12:30 am", "twelve thirty a m"),
        ("23:59", "eleven fifty-nine p m"),
        ("15:00:00", "three p m"),
    ],
    "ordinals": [
        ("1st", "first"),
        ("2nd", "second"),
        ("3rd", "third"),
        ("4th", "fourth"),
        ("11th", "eleventh"),
        ("22nd", "twenty-second"),
        ("101st", "one hundred and first"),
        ("the 3rd item", "the third item"),
    ],
    "units": [
        ("1 l", "one liter"),
        ("2 l", "two liters"),
        ("2 L", "two liters"),
        ("2.5 l", "two point five liters"),
        ("2l", "two liters"),
        ("500 ml", "five hundred milliliters"),
        ("1 kg", "one kilo"),
        ("2 kg", "two kilos"),
        ("3 KG", "three kilos"),
        ("250 g", "two hundred and fifty grams"),
        ("1 g", "one gram"),
        ("1 lb", "one pound"),
        ("2 lbs", "two pounds"),
        ("8 oz", "eight ounces"),
        ("5 km", "five kilometers"),
        ("2 m", "two meters"),
        ("25 °C", "twenty-five degrees Celsius"),
        ("25°C", "twenty-five degrees Celsius"),
        ("1 °C", "one degree Celsius"),
        ("-3 °C", "minus three degrees Celsius"),
        ("70°F", "seventy degrees Fahrenheit"),
        ("2 dozen eggs", "two dozen eggs"),
        ("1 dozen eggs", "one dozen eggs"),
        ("2 pack", "two packs"),
        ("1 packs", "one pack"),
        ("3 pcs", "three pieces"),
        ("2 tbsp", "two tablespoons"),
        ("5 min", "five minutes"),
        ("1 h", "one hour"),
        ("2 h", "two hours"),
        ("2-3 kg", "two to three kilos"),
        ("0.5 l", "half a liter"),
        ("0.5 kg", "half a kilo"),
        ("0.5 dozen", "half a dozen"),
        ("0.5 g", "zero point five grams"),
        # a part of a pound, a kilo or a liter, as said ("a quarter pound of ham"), the
        # unit written out as the narration writes it
        ("0.25 lb", "a quarter pound"),
        ("0.75 kg", "three quarters of a kilo"),
        ("0.5 pounds", "half a pound"),
        ("0.25 pounds of ham", "a quarter pound of ham"),
        ("2 pounds of ham", "two pounds of ham"),
        ("1 liter of milk", "one liter of milk"),
        ("0.25 g", "zero point two five grams"),
        ("4G", "4G"),
    ],
    "measure of something": [
        ("2 l milk", "two liters of milk"),
        ("Added 2 l milk to the shopping list.", "Added two liters of milk to the shopping list."),
        ("1 kg rice", "one kilo of rice"),
        ("0.5 l cream", "half a liter of cream"),
        ("2 l of milk", "two liters of milk"),
        ("2 kg to the list", "two kilos to the list"),
        ("2 dozen eggs", "two dozen eggs"),
        ("5 km walk", "five kilometers walk"),
    ],
    "abbreviations and symbols": [
        ("Dr. Smith", "Doctor Smith"),
        ("Mr. and Mrs. Jones", "Mister and Missus Jones"),
        ("Ms. Lee", "Miz Lee"),
        ("St. Louis", "Saint Louis"),
        ("Main St.", "Main Street"),
        ("approx. 3", "approximately three"),
        ("milk, eggs, etc.", "milk, eggs, et cetera"),
        ("e.g. milk", "for example milk"),
        ("No. 5", "number five"),
        ("#5", "number five"),
        ("salt & pepper", "salt and pepper"),
        ("tea w/ milk", "tea with milk"),
        ("qty 3", "quantity three"),
    ],
    "text without numbers": [
        ("Okay.", "Okay."),
        ("I added milk to the shopping list.", "I added milk to the shopping list."),
        ("  spaces   everywhere  ", "spaces everywhere"),
        ("", ""),
    ],
}


@pytest.mark.parametrize(
    ("written", "spoken"),
    [case for cases in CASES.values() for case in cases],
    ids=[f"{feature}: {w}" for feature, cases in CASES.items() for w, _ in cases],
)
def test_english(written: str, spoken: str) -> None:
    assert speakable(written, "en") == spoken


def test_language_tags_are_accepted() -> None:
    assert speakable("2 l", "en-US") == "two liters"
    assert speakable("2 l", "EN") == "two liters"


def test_a_whole_receipt_sentence() -> None:
    written = "Added 2 l milk, 1 dozen eggs and 1.5 kg rice ($12.50) for 2026-12-01 at 3:30 pm."
    assert speakable(written, "en") == (
        "Added two liters of milk, one dozen eggs and one point five kilos of rice "
        "(twelve dollars and fifty cents) for December first at three thirty p m."
    )
