"""validationOptions: which rules apply. A create applies them all; an update relaxes those the old
object already broke, so a CRD stored by an older server stays updatable (ratcheting)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Options:
    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    require_recognized_conversion_review_version: bool = True
    require_immutable_names: bool = False
    require_openapi_schema: bool = True
    require_valid_property_type: bool = True
    require_structural_schema: bool = True
    require_pruned_defaults: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys_map_set_validation: bool = True
    # CEL expressions of the old object compile in the stored-expressions environment
    preexisting_rules: frozenset[str] = field(default_factory=frozenset)
    preexisting_message_expressions: frozenset[str] = field(default_factory=frozenset)
    # versions whose schema did not change in an update: the per-expression cost limit is not re-applied
    versions_with_unchanged_schemas: frozenset[str] = field(default_factory=frozenset)
    suppress_per_expression_cost: bool = False
    # a bad CA bundle is fine before the CRD is established (and on create)
    allow_invalid_ca_bundle: bool = True

    def with_(self, **changes: object) -> Options:
        return replace(self, **changes)  # type: ignore[arg-type]

    def for_version(self, version: str) -> Options:
        """suppressExpressionCostForUnchangedSchema."""
        if version in self.versions_with_unchanged_schemas:
            return replace(self, suppress_per_expression_cost=True)
        return self


CREATE_OPTIONS = Options()
