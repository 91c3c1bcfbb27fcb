"""The 409 an apply gets when it would change fields other managers own (apimachinery conflict.go)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StatusError
from ..gostrconv import quote as go_quote
from .fieldpath import Path, path_string
from .managed import UPDATE, parse_identifier


@dataclass(frozen=True)
class Conflict:
    manager: str
    operation: str
    api_version: str
    subresource: str
    path: Path
    ident: str = ""

    @classmethod
    def of(cls, ident: str, path: Path) -> Conflict:
        entry = parse_identifier(ident)
        return cls(entry.get("manager", ""), entry.get("operation", ""), entry.get("apiVersion", ""),
                   entry.get("subresource", ""), path, ident)

    @property
    def field(self) -> str:
        return path_string(self.path)

    def who(self) -> str:
        """printManager: `"mgr"`, `"mgr" with subresource "status"`, then ` using apps/v1` for updates."""
        text = go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {go_quote(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


class ApplyConflict(Exception):
    """conflicts: (manager, apiVersion, field path like ".spec.replicas") triples."""

    def __init__(self, entries: list[Conflict]) -> None:
        self.entries = entries
        super().__init__(self.message())

    @property
    def conflicts(self) -> list[tuple[str, str, str]]:
        return [(c.manager, c.api_version, c.field) for c in self.entries]

    def message(self) -> str:
        entries = self.entries
        if len(entries) == 1:
            return f"Apply failed with 1 conflict: conflict with {entries[0].who()}: {entries[0].field}"
        by_manager: dict[str, list[Conflict]] = {}
        for entry in entries:
            by_manager.setdefault(entry.ident, []).append(entry)
        lines = []
        for ident in sorted(by_manager):
            lines.append(f"conflicts with {by_manager[ident][0].who()}:")
            lines += [f"- {entry.field}" for entry in by_manager[ident]]
        return f"Apply failed with {len(entries)} conflicts: " + "\n".join(lines)

    def status_error(self, kind: str = "", group: str = "", name: str = "") -> StatusError:
        """errors.NewApplyConflict: 409 Conflict whose details carry only the causes (no name or kind)."""
        causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {c.who()}", "field": c.field}
                  for c in self.entries]
        return StatusError(409, "Conflict", self.message(), {"causes": causes})
