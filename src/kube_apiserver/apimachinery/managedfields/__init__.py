"""Server-side apply and managed fields (structured-merge-diff and apimachinery's field manager)."""

from .conflict import ApplyConflict
from .manager import ADMISSION_WARNING, FieldManager, validate_managed_fields

__all__ = ["ADMISSION_WARNING", "ApplyConflict", "FieldManager", "validate_managed_fields"]
