"""Voice turns on phrasings and items beyond ``voice``'s own commands.

``voice`` measures a fixed set of commands in many voices and conditions, and the
grammar and gate have been tuned on it. This one measures how the turn carries over to
other ways of saying things to a kitchen assistant ("oh, and add carrots", "we're
running low on olive oil", "add four apples, two pears and a melon to the list") and
near misses ("set a timer for ten minutes", "I don't need milk"), in clean speech
(Piper, two flite voices, espeak-ng); and what it does with items the verifier cannot
hear ("turkey bacon", "fish sauce"): it must never act on another item, and asks; how
much of a listed item is needed ("make that three apples"); and requests written down
before they were measured (``FURTHER``).

Reported as ``voice`` does, for each part: commands accepted, wrong actions, the
same for Whisper alone, and the failures.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bench.voice import SUMMARY, _run

PHRASINGS = [
    "hey can you add peanut butter to the list",
    "add some bananas please",
    "put eggs on the grocery list",
    "i need two pounds of ground beef",
    "we need more toilet paper",
    "add three cans of tuna",
    "add milk",
    "can you put yogurt on my shopping list",
    "please add a loaf of bread to my list",
    "add paper towels to the shopping list",
    "remove milk from my list",
    "take eggs off the list",
    "delete the cheese from the shopping list",
    "i bought the milk",
    "mark eggs as done",
    "cross bread off the list",
    "what's on the list",
    "what do we need from the store",
    "read me the shopping list",
    "what's on my calendar today",
    "what's next on my calendar",
    "do i have anything tomorrow",
    "add a meeting with john on friday at ten am to my calendar",
    "remind me to pick up the kids at three thirty",
    "schedule a haircut next tuesday at four pm",
    "cancel the dentist appointment tomorrow",
    "we're running low on olive oil",
    "we ran out of dish soap",
    "i need to buy batteries",
    "could you add chicken breasts to the list",
    "add five bananas and a bag of apples",
    "add a pack of butter",
    "add two bottles of wine to the shopping list",
    "put six eggs on the list",
    "add ketchup and mustard to the list",
    "add half a kilo of cheese",
    "we need milk",
    "get some cereal",
    "oh and add carrots",
    "add carrots too",
    "also add onions",
    "add onions as well",
    "please put garlic on the shopping list",
    "add some tomatoes to the list please",
    "hey add milk to my groceries",
    "stick some coffee on the list",
    "don't let me forget to buy milk",
    "i'm out of milk",
    "shopping list add eggs",
    "okay add flour to the shopping list",
    "can you add sugar",
    "would you add a bottle of olive oil to the list",
    "i want to add apples to my shopping list",
    "add four apples, two pears and a melon to the list",
    "put cheese and crackers on the list",
    "add a dozen eggs",
    "add one bag of rice",
    "we're almost out of butter",
    "i think we need more eggs",
    "add milk and eggs",
    "remove bread",
    "scratch the eggs off my list",
    "can you remind me to call the dentist tomorrow morning",
    "what's on the agenda for friday",
    "what time is my appointment tomorrow",
    "add grapes to the shopping list",
    "add a box of cereal and two cartons of milk",
]
NEAR_MISSES = [
    "don't add eggs",
    "i don't need milk",
    "we have plenty of milk",
    "milk is expensive these days",
    "the kids ate all the cookies",
    "set a timer for ten minutes",
    "turn off the kitchen lights",
    "what's the weather like tomorrow",
    "play some music",
    "how much does a gallon of milk cost",
    "i love fresh bread",
    "did you hear that",
]
# Items the verifier cannot hear: none is in the built-in grocery list. "ghee" was one
# until the list learned it (after 00bbbd0); "mace", which the verifier hears as "mint"
# or "dates", took its place.
UNKNOWN_ITEMS = [
    f"add {item} to the shopping list"
    for item in (
        "kale chips", "turkey bacon", "fish sauce", "cheese sticks", "chicken soup",
        "orange soda", "milk chocolate", "egg noodles", "garlic bread", "chocolate cake",
        "sweet corn", "baby carrots", "cream soda", "tomato soup", "butter beans",
        "milk powder", "rice cakes", "beef jerky", "bean sprouts", "bread crumbs",
        "apple pie", "oat cookies", "tahini", "kimchi", "mace",
    )
]  # fmt: skip
# Requests said with more around them: when or what for an item is needed, why, one
# more item after the list, a request asked round the houses. Each was first measured
# outside the verifier's grammar (the turn acts only where the verifier heard the
# request in its own words, and asks otherwise), then added to it.
AROUND = [
    "we need milk tomorrow",
    "add eggs to the list for saturday",
    "buy flowers for friday",
    "we need eggs for the weekend",
    "add milk to the list and eggs",
    "put bread on the shopping list and also some butter",
    "i was wondering if you could add cheese to the list",
    "add coffee to the list we're almost out",
    "looks like we need more paper towels",
    "we're gonna need eggs for the cake",
]
# More requests as a household says them, written down together before any of them was
# measured, to see how the turn carries over. The parser then read two wrong ("flour
# for the bread" as one item, "for the salad" as nothing), and half of them were not in
# the verifier's grammar, before the item tail (``grammar.ITEM_TAIL``).
FURTHER = [
    "can you put yogurt on the shopping list for me",
    "we've run out of dish soap",
    "grab some apples on the way home",
    "add a bag of potatoes to the list please",
    "i'm gonna need flour for the bread",
    "please put two bottles of water on my list",
    "add orange juice we're running low",
    "don't let me forget to buy batteries",
    "add butter to our shopping list",
    "could you add a box of cereal",
    "we're almost out of shampoo",
    "put carrots and onions on the list",
    "we need toothpaste on friday",
    "oh we also need some garlic",
    "add lettuce to the list for the salad",
    "i think we need more rice",
]
# How much of an item on the list, said right after it was added (shopping.set_quantity,
# ``last_item``: "make that three" is about the milk). Said with the item ("make that
# three apples"), such a request is not in the verifier's grammar, and asked.
QUANTITIES = [
    "make that three",
    "actually make it two liters",
    "change that to a gallon",
    "make it four cartons",
    "make that six",
    "change it to half a liter",
    "actually make that two",
    "make it three bottles instead",
]
QUANTITIES_OF = "milk"
VOICES = ("piper", "flite_slt", "flite_awb", "espeak_us")


def run(limit: int | None = None) -> dict[str, Any]:
    phrasings = asyncio.run(_run(limit, VOICES, ("clean",), PHRASINGS, NEAR_MISSES))
    unknown = asyncio.run(_run(limit, VOICES[:2], ("clean",), UNKNOWN_ITEMS, ()))
    around = asyncio.run(_run(limit, VOICES, ("clean",), AROUND, ()))
    further = asyncio.run(_run(limit, VOICES, ("clean",), FURTHER, ()))
    quantities = asyncio.run(
        _run(limit, VOICES, ("clean",), QUANTITIES, (), last_item=QUANTITIES_OF)
    )
    return {
        "phrasings": {k: phrasings[k] for k in SUMMARY},
        "unknown_items": {k: unknown[k] for k in SUMMARY},
        "around": {k: around[k] for k in SUMMARY},
        "further": {k: further[k] for k in SUMMARY},
        "quantities": {k: quantities[k] for k in SUMMARY},
        "goals": {"wrong_actions": 0},
    }
