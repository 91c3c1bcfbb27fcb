"""The committed protobuf table is what hack/gen_protobuf.py writes from the reference data and the Go facts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GENERATOR = ROOT / "hack" / "gen_protobuf.py"


def generator():
    spec = importlib.util.spec_from_file_location("gen_protobuf", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_is_generated_from_the_reference():
    gen = generator()
    if not gen.DEFAULT_PROTO.exists():
        pytest.skip("the reference data (../shared/api) is not here")
    data = json.loads(gen.DEFAULT_PROTO.read_text())
    table = gen.build_table(
        data["packages"], json.loads(gen.FACTS.read_text()), json.loads(gen.DEFAULT_RESOURCES.read_text())
    )
    assert gen.render(table, data["source"]) == gen.OUTPUT.read_text()


def test_go_facts_from_types_go():
    """Pointers, inline structs, omitempty and JSON names come from the Go struct tags."""
    source = """
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Thing is a kind.
type Thing struct {
	metav1.TypeMeta `json:",inline"`
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Count *int32 `json:"count,omitempty" protobuf:"varint,2,opt,name=count"`
	Inner `json:",inline" protobuf:"bytes,3,opt,name=inner"`
	Ready bool `json:"ready" protobuf:"varint,4,opt,name=ready"`
	UID types.UID `json:"uid,omitempty" protobuf:"bytes,5,opt,name=uID,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

type ExtraValue []string
"""
    facts = generator()._package_facts(source)
    assert facts == {
        "structs": {"Thing": {"1": "", "2": "*", "3": "^", "4": "!", "5": "=uid"}},
        "kinds": ["Thing"],
        "lists": ["ExtraValue"],
    }
