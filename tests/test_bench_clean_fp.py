"""The clean-turn benchmark splits services by whether train has *dialogues* of them (``services_with_dialogues``),
not by the train schema."""
import json

from sage_core.corpora.sgd.loader import services_with_dialogues


def test_seen_services_are_those_with_train_dialogues_not_those_in_the_schema(tmp_path):
    # the schema lists three services; the dialogues hold two of them (as the shared train split lists 26 and holds 20)
    (tmp_path / "schema.json").write_text(json.dumps([{"service_name": s} for s in ("Buses_1", "Travel_1", "Hotels_1")]))
    (tmp_path / "dialogues_001.json").write_text(json.dumps([{"dialogue_id": "1_1", "services": ["Buses_1"]}]))
    (tmp_path / "dialogues_002.json").write_text(json.dumps([{"dialogue_id": "2_1", "services": ["Hotels_1", "Buses_1"]}]))
    assert services_with_dialogues(tmp_path) == {"Buses_1", "Hotels_1"}


def test_no_or_unreadable_train_folder_prints_no_split(tmp_path):
    assert services_with_dialogues(tmp_path / "missing") == set()
    (tmp_path / "dialogues_001.json").write_text("{not json")
    assert services_with_dialogues(tmp_path) == set()
