"""Generate the embedded demo schema and slice (``schema.json``, ``demo_slice.jsonl``).

Why a script: spans into the user text are computed with ``str.find`` instead
of hand-counted, states are accumulated turn by turn so ``state_before`` of
turn t is always ``state_after`` of turn t-1, and the output is validated
against the schema with the same code the app uses. Run
``python data/demo/make_demo.py`` after editing; commit both outputs.

The dialogues are our own, written for the demo. Five services, fifteen
dialogues, clean turns and at least two failures of each class (IUV, WNF, PC,
UV) with gold labels; dialogues ``pharm-*``, ``flight-003`` and ``car-003`` carry no
``user_values``/``agent_acts`` so the compiler's extraction path shows.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from sage_core import (
    AgentAct,
    Gold,
    Turn,
    UserValue,
    Utterance,
    load_sgd_schema,
    read_slice,
    validate_against,
    write_slice,
)

SCHEMA_PATH = HERE / "schema.json"
SLICE_PATH = HERE / "demo_slice.jsonl"


def slot(name: str, description: str, values: Optional[list[str]] = None) -> dict:
    return {"name": name, "description": description, "is_categorical": bool(values),
            "possible_values": list(values or [])}


def intent(name: str, description: str, required: list[str], optional: Optional[dict] = None,
           transactional: bool = True, results: Optional[list[str]] = None) -> dict:
    return {"name": name, "description": description, "is_transactional": transactional,
            "required_slots": required, "optional_slots": optional or {},
            "result_slots": results or required + list(optional or {})}


SCHEMA = [
    {"service_name": "Restaurants_1", "description": "Find restaurants and reserve tables",
     "slots": [slot("restaurant_name", "Name of the restaurant"),
               slot("city", "City where the restaurant is located"),
               slot("cuisine", "Type of food served", ["Italian", "Mexican", "Japanese", "Indian", "Seafood"]),
               slot("date", "Date of the reservation"),
               slot("time", "Time of the reservation"),
               slot("party_size", "Number of people in the party", ["1", "2", "3", "4", "5", "6"])],
     "intents": [intent("FindRestaurants", "Search for restaurants by city and cuisine",
                        ["city", "cuisine"], transactional=False, results=["restaurant_name", "city", "cuisine"]),
                 intent("ReserveRestaurant", "Reserve a table at a restaurant",
                        ["restaurant_name", "city", "time"], {"date": "today", "party_size": "2"})]},
    {"service_name": "Flights_1", "description": "Search and book one-way flights",
     "slots": [slot("origin_city", "City the flight departs from"),
               slot("destination_city", "City the flight arrives in"),
               slot("departure_date", "Date of departure"),
               slot("airline", "Airline operating the flight", ["United", "Delta", "Alaska", "JetBlue"]),
               slot("passengers", "Number of passengers", ["1", "2", "3", "4"]),
               slot("seating_class", "Cabin class", ["Economy", "Premium Economy", "Business"])],
     "intents": [intent("SearchOnewayFlight", "Find one-way flights between two cities",
                        ["origin_city", "destination_city", "departure_date"],
                        {"passengers": "1", "seating_class": "Economy"}, transactional=False),
                 intent("ReserveOnewayFlight", "Book a one-way flight",
                        ["origin_city", "destination_city", "departure_date", "airline"],
                        {"passengers": "1", "seating_class": "Economy"})]},
    {"service_name": "Clinic_1", "description": "Book appointments with doctors at a clinic",
     "slots": [slot("doctor_name", "Name of the doctor"),
               slot("appointment_date", "Date of the appointment"),
               slot("appointment_time", "Time of the appointment"),
               slot("patient_name", "Full name of the patient")],
     "intents": [intent("BookAppointment", "Book an appointment with a doctor",
                        ["doctor_name", "appointment_date", "appointment_time", "patient_name"])]},
    {"service_name": "Pharmacy_1", "description": "Refill prescriptions at a pharmacy",
     "slots": [slot("prescription_id", "Identifier printed on the prescription label"),
               slot("pharmacy_location", "Street of the pharmacy branch"),
               slot("pickup_date", "Day the refill will be picked up"),
               slot("patient_name", "Full name of the patient")],
     "intents": [intent("RefillPrescription", "Order a refill of an existing prescription",
                        ["prescription_id", "pharmacy_location", "pickup_date"])]},
    {"service_name": "RentalCars_1", "description": "Reserve rental cars",
     "slots": [slot("pickup_city", "City where the car is picked up"),
               slot("pickup_date", "Date the car is picked up"),
               slot("pickup_time", "Time the car is picked up"),
               slot("dropoff_date", "Date the car is returned"),
               slot("car_type", "Type of car", ["Compact", "Standard", "SUV"])],
     "intents": [intent("ReserveCar", "Reserve a rental car",
                        ["pickup_city", "pickup_date", "pickup_time", "dropoff_date", "car_type"])]},
]


@dataclass
class T:
    """One authored turn: what the user said, what the agent replied, and how the tracker behaved."""

    user: str
    agent: str
    values: list = field(default_factory=list)  # (slot, value) or (slot, value, mention in user text)
    acts: list = field(default_factory=list)  # (act,), (act, slot) or (act, slot, value)
    write: dict = field(default_factory=dict)  # tracker writes beyond/instead of the user values
    drop: tuple = ()  # user-value slots the tracker failed to write
    gold: tuple = ("acceptable", None)
    workflow: Optional[str] = None  # switch workflow from this turn on


def dialogue(did: str, workflow: str, turns: list[T], annotated: bool = True) -> list[Turn]:
    """Accumulate history and state over the authored turns."""
    out, history, state = [], [], {}
    for i, t in enumerate(turns, start=1):
        workflow = t.workflow or workflow
        uvs = []
        for v in t.values:
            s, value, mention = (v + (v[1],))[:3]
            pos = t.user.find(mention)
            if pos < 0:
                raise ValueError(f"{did} turn {i}: mention {mention!r} not in user text {t.user!r}")
            uvs.append(UserValue(s, value, (pos, pos + len(mention))))
        after = dict(state)
        for uv in uvs:
            if uv.slot not in t.drop:
                after[uv.slot] = uv.value
        after.update(t.write)
        acts = [AgentAct(a[0], *(a[1:] + (None, None))[:2]) for a in t.acts]
        out.append(Turn(turn_id=f"{did}-t{i}", dialogue_id=did, workflow=workflow,
                        history=list(history), user=t.user, agent=t.agent,
                        state_before=dict(state), state_after=after,
                        user_values=uvs if annotated else None,
                        agent_acts=acts if annotated else None,
                        gold=Gold(*t.gold)))
        history += [Utterance("user", t.user), Utterance("agent", t.agent)]
        state = after
    return out


FAIL = lambda cls: ("failure", cls)  # noqa: E731

DIALOGUES = [
    dialogue("rest-001", "Restaurants_1:ReserveRestaurant", [
        T("Hi, I'd like to book a table at Luigi's Trattoria in San Jose.",
          "Sure. What time would you like the reservation?",
          [("restaurant_name", "Luigi's Trattoria"), ("city", "San Jose")], [("REQUEST", "time")]),
        T("Around 7 pm, for 4 people.",
          "Please confirm: a table for 4 at Luigi's Trattoria in San Jose at 7 pm today.",
          [("time", "7 pm"), ("party_size", "4")],
          [("CONFIRM", "restaurant_name", "Luigi's Trattoria"), ("CONFIRM", "time", "7 pm"),
           ("CONFIRM", "party_size", "4")], write={"time": "19:00"}),
        T("Yes, that's right.", "Your table is booked. Enjoy your meal!", [], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("rest-002", "Restaurants_1:ReserveRestaurant", [
        T("Can you reserve a table at Blue Fin in Seattle at 8 pm?",
          "Of course. How many people will be in your party?",
          [("restaurant_name", "Blue Fin"), ("city", "Seattle"), ("time", "8 pm")], [("REQUEST", "party_size")]),
        T("There will be 6 of us.",
          "Please confirm: a table for 2 at Blue Fin in Seattle at 8 pm.",
          [("party_size", "6")], [("CONFIRM", "party_size", "2"), ("CONFIRM", "time", "8 pm")],
          drop=("party_size",), gold=FAIL("IUV")),
        T("No, I said 6 people.",
          "Sorry about that. Your table for 6 at Blue Fin at 8 pm is booked.",
          [("party_size", "6")], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("rest-003", "Restaurants_1:FindRestaurants", [
        T("Find me an Italian place in Oakland.", "How about Pasta Pomodoro in Oakland?",
          [("cuisine", "Italian"), ("city", "Oakland")], [("OFFER", "restaurant_name", "Pasta Pomodoro")]),
        T("Sounds good, book it for 6:30 pm.", "Sure. What city are you in?",
          [("time", "6:30 pm")], [("REQUEST", "city")], write={"restaurant_name": "Pasta Pomodoro"},
          gold=FAIL("WNF"), workflow="Restaurants_1:ReserveRestaurant"),
        T("Oakland, I already said that.",
          "Sorry! Your table at Pasta Pomodoro at 6:30 pm is booked.",
          [("city", "Oakland")], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("rest-004", "Restaurants_1:ReserveRestaurant", [
        T("Book Sakura House in Palo Alto for me and my wife tonight.", "What time should I book?",
          [("restaurant_name", "Sakura House"), ("city", "Palo Alto"), ("party_size", "2", "me and my wife"),
           ("date", "today", "tonight")], [("REQUEST", "time")]),
        T("Half past seven.", "Please confirm: Sakura House in Palo Alto, today at 7:30 pm for 2 people.",
          [("time", "7:30 pm", "Half past seven")],
          [("CONFIRM", "restaurant_name", "Sakura House"), ("CONFIRM", "time", "7:30 pm")],
          write={"time": "19:30"}),
        T("Perfect.", "Your table is booked. Enjoy!", [], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("flight-001", "Flights_1:SearchOnewayFlight", [
        T("I need a one-way flight from Chicago to Denver.", "When would you like to leave?",
          [("origin_city", "Chicago"), ("destination_city", "Denver")], [("REQUEST", "departure_date")],
          write={"destination_city": "Dallas"}, gold=FAIL("IUV")),
        T("No, to Denver, not Dallas. Leaving March 3rd.",
          "Got it. United has a flight from Chicago to Denver on March 3rd at 9:40 am in Economy.",
          [("destination_city", "Denver"), ("departure_date", "March 3rd")],
          [("OFFER", "airline", "United"), ("INFORM", "seating_class", "Economy")]),
    ]),
    dialogue("flight-002", "Flights_1:ReserveOnewayFlight", [
        T("Book me a flight from Boston to Miami on April 12 with Delta.",
          "Sure. Which city are you flying from?",
          [("origin_city", "Boston"), ("destination_city", "Miami"), ("departure_date", "April 12"),
           ("airline", "Delta")], [("REQUEST", "origin_city")], gold=FAIL("WNF")),
        T("Boston, like I said. Two passengers, economy.",
          "Please confirm: 2 passengers on Delta from Boston to Miami on April 12, Economy.",
          [("origin_city", "Boston"), ("passengers", "2", "Two"), ("seating_class", "Economy", "economy")],
          [("CONFIRM", "passengers", "2"), ("CONFIRM", "airline", "Delta"),
           ("CONFIRM", "seating_class", "Economy")]),
        T("Yes please.", "Your flight is booked. Your confirmation number is DL4821.", [],
          [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("flight-003", "Flights_1:SearchOnewayFlight", [
        T("Find flights from Portland to Las Vegas.", "What date do you want to travel?",
          write={"origin_city": "Portland", "destination_city": "Las Vegas"}),
        T("May 20th, just me.", "Where would you like to fly to?",
          write={"departure_date": "May 20th"}, gold=FAIL("WNF")),
    ], annotated=False),
    dialogue("clinic-001", "Clinic_1:BookAppointment", [
        T("I'd like an appointment with Dr. Patel.", "Sure. What day works for you?",
          [("doctor_name", "Dr. Patel")], [("REQUEST", "appointment_date")]),
        T("Next Tuesday, please.", "Great, your appointment with Dr. Patel next Tuesday is confirmed.",
          [("appointment_date", "next Tuesday", "Next Tuesday")], [("NOTIFY_SUCCESS",)], gold=FAIL("PC")),
    ]),
    dialogue("clinic-002", "Clinic_1:BookAppointment", [
        T("I need to see Dr. Okafor on May 2.", "What time would you prefer?",
          [("doctor_name", "Dr. Okafor"), ("appointment_date", "May 2")], [("REQUEST", "appointment_time")]),
        T("10:30 in the morning.", "And what is the name of the patient?",
          [("appointment_time", "10:30 am", "10:30 in the morning")], [("REQUEST", "patient_name")]),
        T("It's for Maria Lopez.",
          "Please confirm: Maria Lopez with Dr. Okafor on May 2 at 10:30 am.",
          [("patient_name", "Maria Lopez")],
          [("CONFIRM", "patient_name", "Maria Lopez"), ("CONFIRM", "appointment_time", "10:30 am")]),
        T("Correct.", "Booked! You will get a reminder the day before.", [], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("clinic-003", "Clinic_1:BookAppointment", [  # a double-check annotated as REQUEST: SAGE's FP
        T("Can I see Dr. Nguyen on June 3 at 4 pm? The patient is Leo Park.",
          "Just to double-check: what time did you want, 4 pm?",
          [("doctor_name", "Dr. Nguyen"), ("appointment_date", "June 3"), ("appointment_time", "4 pm"),
           ("patient_name", "Leo Park")], [("REQUEST", "appointment_time")]),
        T("Yes, 4 pm.", "Your appointment with Dr. Nguyen on June 3 at 4 pm is booked.",
          [("appointment_time", "4 pm")], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("pharm-001", "Pharmacy_1:RefillPrescription", [
        T("I want to refill prescription RX-40213.", "Which pharmacy location should I send it to?",
          write={"prescription_id": "RX-40213"}),
        T("The Elm Street pharmacy.", "When would you like to pick it up?",
          write={"pharmacy_location": "Elm Street"}),
        T("Friday afternoon.", "Your refill at Elm Street will be ready for pickup on Friday.",
          write={"pickup_date": "Friday"}),
    ], annotated=False),
    dialogue("pharm-002", "Pharmacy_1:RefillPrescription", [
        T("Please refill RX-77120 at the Main Street store.",
          "Done! Your refill is all set and will be ready soon.",
          write={"prescription_id": "RX-77120", "pharmacy_location": "Main Street"}, gold=FAIL("PC")),
        T("Can I pick it up tomorrow?", "Yes, it will be ready tomorrow morning.",
          write={"pickup_date": "tomorrow", "patient_name": "John Smith"}, gold=FAIL("UV")),
    ], annotated=False),
    dialogue("car-001", "RentalCars_1:ReserveCar", [
        T("I need a rental car in Phoenix from June 5 to June 9.", "What time will you pick it up?",
          [("pickup_city", "Phoenix"), ("pickup_date", "June 5"), ("dropoff_date", "June 9")],
          [("REQUEST", "pickup_time")], write={"car_type": "SUV"}, gold=FAIL("UV")),
        T("Around 10 am. A compact car is fine.",
          "Please confirm: a Compact car in Phoenix, June 5 at 10 am until June 9.",
          [("pickup_time", "10 am"), ("car_type", "Compact", "compact")],
          [("CONFIRM", "car_type", "Compact"), ("CONFIRM", "pickup_time", "10 am")]),
        T("Yes.", "Your car is reserved. Have a safe trip!", [], [("NOTIFY_SUCCESS",)]),
    ]),
    dialogue("car-003", "RentalCars_1:ReserveCar", [
        T("I'd like an SUV in Denver, picking up August 14 at 9 am and returning August 20.",
          "Great, the SUV is reserved for you. Anything else?",
          write={"car_type": "SUV", "pickup_city": "Denver", "pickup_date": "August 14",
                 "pickup_time": "9 am", "dropoff_date": "August 20"}),
        T("Make it a compact instead.", "No problem. Your reservation now has a compact car.",
          write={"car_type": "Compact"}),
    ], annotated=False),
    dialogue("car-002", "RentalCars_1:ReserveCar", [
        T("Looking for a car in Austin, pickup July 1 at noon, return July 3.",
          "I have a Standard sedan available. Would that work?",
          [("pickup_city", "Austin"), ("pickup_date", "July 1"), ("pickup_time", "noon"),
           ("dropoff_date", "July 3")], [("OFFER", "car_type", "Standard")]),
        T("Yes, that works.", "Please confirm: a Standard car in Austin, July 1 at noon until July 3.",
          [], [("CONFIRM", "car_type", "Standard")], write={"car_type": "Standard"}),
        T("Confirmed.", "Your car is reserved. See you on July 1!", [], [("NOTIFY_SUCCESS",)]),
    ]),
]


def main() -> int:
    SCHEMA_PATH.write_text(json.dumps(SCHEMA, indent=2) + "\n", encoding="utf-8")
    turns = [t for d in DIALOGUES for t in d]
    write_slice(turns, SLICE_PATH)
    registry = load_sgd_schema(SCHEMA_PATH)
    validate_against(read_slice(SLICE_PATH), registry, str(SLICE_PATH))
    by_class: dict[str, int] = {}
    for t in turns:
        key = t.gold.failure_class or "clean"
        by_class[key] = by_class.get(key, 0) + 1
    print(f"wrote {len(turns)} turns in {len(DIALOGUES)} dialogues over {len(registry)} workflows: {by_class}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
