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


@pytest.mark.parametrize("name, desc, want", [
    # a name no pattern reads: the description's head or its "at this ... time" decides
    ("dining_hour", "Hour the table is booked for", "time"),
    ("scheduled_start", "The coach sets off at this clock time.", "time"),
    ("collection_day", "Day the hire starts", "date"),
    ("rooms_wanted", "How many rooms are booked", "number"),
    ("party", "Number of guests at the table", "number"),
    # what the description does not make a type
    ("funds", "The amount of money held in a bank account at a given time", "text"),
    ("origin_airport_name", "Number of the airport flying out from", "text"),
    ("ride_duration", "Approximate duration of ride to the destination", "text"),
    # the name still decides first; a "number" described as a telephone is a phone number
    ("stay_length", "Length of stay in days", "number"),
    ("town_of_stay", "Town where the lodging is", "text"),
    ("contact_number", "Phone number for the apartment", "text"),
    ("pickup_time", "", "time"),
])
def test_value_type_from_the_description_where_the_name_says_nothing(name, desc, want):
    from sage_core.specs.workflow import infer_value_type
    assert infer_value_type(name, False, [], desc) == want


def test_dev_schema_paraphrases_keep_value_types(shared_data):
    """Our own paraphrased renderings of the dev schema (benchmarks/dev_schema_variants): renamed slots keep the
    original's value type, except where the original name gave a wrong one (three slots of the heavy rendering)."""
    from pathlib import Path
    from sage_core.corpora.sgd.loader import sgdx_slot_map
    base = load_sgd_schema(shared_data / "sgd" / "dev" / "schema.json")
    root = Path(__file__).resolve().parents[1] / "benchmarks" / "dev_schema_variants"
    for variant, most_differing in (("v_light", 1), ("v_heavy", 3)):
        reg = load_sgd_schema(root / variant / "schema.json")
        mapping = sgdx_slot_map(base, reg)
        differ = []
        for svc, slots in mapping.items():
            o = next(w for w in base if w.service == svc).slots
            v = next(w for w in reg if w.service == mapping.services[svc]).slots
            differ += [(a, b) for a, b in slots.items() if o[a].value_type != v[b].value_type]
        assert len(differ) <= most_differing, (variant, differ)


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
