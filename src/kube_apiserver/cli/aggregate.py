"""The text of k8s.io/apimachinery/pkg/util/errors.NewAggregate(errs).Error()."""

from __future__ import annotations


def aggregate_message(errors: list[str]) -> str:
    """One error alone; several (duplicates dropped) as "[err1, err2]"; none as ""."""
    if len(errors) == 1:
        return errors[0]
    unique = list(dict.fromkeys(errors))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]" if unique else ""
