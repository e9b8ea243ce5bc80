"""A small hand-written SGD schema (one service, two intents) shared by the injector and slice-builder tests."""
from __future__ import annotations

import json

import pytest

from sage_core.specs.sgd_format import load_sgd_schema

SCHEMA = [{
    "service_name": "Restaurants_9",
    "slots": [
        {"name": "restaurant_name", "description": "Name of the restaurant", "is_categorical": False,
         "possible_values": []},
        {"name": "city", "description": "City where the restaurant is located", "is_categorical": False,
         "possible_values": []},
        {"name": "date", "description": "Date of the reservation", "is_categorical": False, "possible_values": []},
        {"name": "time", "description": "Time of the reservation", "is_categorical": False, "possible_values": []},
        {"name": "party_size", "description": "Number of people", "is_categorical": True,
         "possible_values": ["1", "2", "3", "4", "5", "6"]},
        {"name": "price_range", "description": "Price range of the restaurant", "is_categorical": True,
         "possible_values": ["cheap", "moderate", "pricey"]},
        {"name": "has_live_music", "description": "Whether the place has live music", "is_categorical": True,
         "possible_values": ["True", "False"]},
    ],
    "intents": [
        {"name": "ReserveRestaurant", "description": "Reserve a table", "is_transactional": True,
         "required_slots": ["restaurant_name", "city", "date", "time"], "optional_slots": {"party_size": "2"}},
        {"name": "FindRestaurants", "description": "Find restaurants", "is_transactional": False,
         "required_slots": ["city"], "optional_slots": {"price_range": "dontcare"}},
    ],
}]


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    p = tmp_path_factory.mktemp("schema") / "schema.json"
    p.write_text(json.dumps(SCHEMA))
    return load_sgd_schema(p)
