"""WorkflowSpec relations and the schema loaders (SGD, SGD-X, MultiWOZ 2.2, our YAML)."""
import pytest
from test_slice_io import SPEC

from sage_core.data.errors import SageInputError
from sage_core.specs.loading import load_workflows
from sage_core.specs.sgd_format import load_sgd_schema
from sage_core.specs.yaml_spec import load_workflow_spec


def test_yaml_spec_order_and_outcome(tmp_path):
    p = tmp_path / "spec.yaml"
    p.write_text(SPEC)
    w = load_workflows(p).get("Pharmacy_1:Refill")
    assert w.legal_next({}) == {"patient_name"}
    assert w.legal_next({"patient_name": "Ana"}) == {"rx_number"}
    assert w.legal_next({"patient_name": "Ana", "rx_number": "7"}) == {"pickup_time"}
    assert not w.outcome({"patient_name": "Ana"})
    assert w.missing_for_outcome({"patient_name": "Ana"}) == ["rx_number"]
    assert w.outcome({"patient_name": "Ana", "rx_number": "7"})
    assert w.slots["pickup_time"].value_type == "time"


def test_yaml_spec_rejects_undefined_slot(tmp_path):
    p = tmp_path / "spec.yaml"
    p.write_text(SPEC.replace("required: [patient_name, rx_number]", "required: [patient_name, colour]"))
    with pytest.raises(SageInputError) as e:
        load_workflow_spec(p)
    assert e.value.field == "required" and "colour" in str(e.value)


def test_sgd_schema_workflows(sgd_schema_path):
    reg = load_sgd_schema(sgd_schema_path)
    w = reg.get("Restaurants_2:ReserveRestaurant")
    assert w.required == ["restaurant_name", "location", "time"]
    assert set(w.optional) == {"number_of_seats", "date"}
    assert w.legal_next({"restaurant_name": "Sushi"}) == {"location", "time", "number_of_seats", "date"}
    assert w.slots["time"].value_type == "time"
    assert w.slots["has_seating_outdoors"].value_type == "bool"
    with pytest.raises(SageInputError, match="unknown workflow 'Restaurants_2:Nope'"):
        reg.get("Restaurants_2:Nope")


@pytest.mark.parametrize("variant", ["v1", "v2", "v3", "v4", "v5"])
def test_sgdx_variants_load_unchanged(shared_data, variant):
    base = load_sgd_schema(shared_data / "sgd" / "test" / "schema.json")
    reg = load_sgd_schema(shared_data / "sgd" / "sgd_x" / variant / "schema.json")
    assert len(reg) == len(base)
    # same number of required slots per workflow, whatever the names
    assert sorted(len(w.required) for w in reg) == sorted(len(w.required) for w in base)


def test_multiwoz22_schema(shared_data):
    reg = load_sgd_schema(shared_data / "multiwoz" / "schema_2.2.json")
    assert "hotel:book_hotel" in reg and "hotel-bookpeople" in reg.get("hotel:book_hotel").slots


def test_malformed_schema(tmp_path):
    p = tmp_path / "schema.json"
    p.write_text('[{"service_name": "X", "slots": [}')
    with pytest.raises(SageInputError, match="malformed JSON"):
        load_sgd_schema(p)


EVENTS_SCHEMA = [{
    "service_name": "Shows_9", "description": "find and book shows",
    "slots": [{"name": n, "description": d, "is_categorical": False, "possible_values": []} for n, d in [
        ("show_name", "Name of the show"), ("genre", "Kind of show"), ("city", "City of the show"),
        ("tickets", "Number of tickets"), ("venue_address", "Address of the venue")]],
    "intents": [
        {"name": "FindShows", "is_transactional": False, "required_slots": ["city"], "optional_slots": {"genre": "dontcare"},
         "result_slots": ["show_name", "genre", "city", "venue_address"]},
        {"name": "BuyTickets", "is_transactional": True, "required_slots": ["show_name", "tickets", "city"],
         "optional_slots": {}, "result_slots": ["show_name", "tickets", "city", "venue_address", "genre"]},
        # a transaction's results describe what it booked: they search for nothing
        {"name": "RateShow", "is_transactional": True, "required_slots": ["genre"], "optional_slots": {},
         "result_slots": ["genre", "tickets"]}]}]


def test_asking_what_a_search_takes_is_legal_while_the_value_it_finds_is_missing(tmp_path):
    import json
    p = tmp_path / "schema.json"
    p.write_text(json.dumps(EVENTS_SCHEMA))
    reg = load_sgd_schema(p)
    buy = reg.get("Shows_9:BuyTickets")
    assert buy.finders == {"show_name": frozenset({"genre"})}
    assert buy.legal_next({"city": "Oslo"}) == {"show_name", "tickets", "genre"}  # "What kind of show?" narrows it
    assert buy.legal_next({"city": "Oslo", "show_name": "Hamlet"}) == {"tickets"}  # found: no longer
    assert buy.legal_next({"city": "Oslo", "genre": "Drama"}) == {"show_name", "tickets"}
    # FindShows takes city, so it finds no city; RateShow is a transaction; the search itself gains nothing
    assert reg.get("Shows_9:FindShows").finders == {} and reg.get("Shows_9:RateShow").finders == {}
    assert reg.get("Shows_9:FindShows").legal_next({}) == {"city", "genre"}
