"""CEL errors in the words Kubernetes reports them.

Compile errors print as cel-go's `Issues.String()` ("ERROR: <input>:1:6: Syntax error: ..." plus the
source line and a caret); apiextensions prefixes them with "compilation failed: ". Runtime errors are
cel-go's `types.Err` texts ("no such key: foo", "no such overload", "division by zero"), which
apiextensions wraps as "<err> evaluating rule: <rule>". The interpreter (cel-rust) raises its own
exception types and wordings; `runtime_message` maps them back."""

from __future__ import annotations

import re

from kube_apiserver.cel.lexer import line_column

NO_SUCH_OVERLOAD = "no such overload"
DIVISION_BY_ZERO = "division by zero"
MODULUS_BY_ZERO = "modulus by zero"
INT_OVERFLOW = "integer overflow"


class CompileError(Exception):
    """The expression does not compile. str() is "compilation failed: <issues>" as Kubernetes reports
    it; `issues` is cel-go's Issues.String() alone (for "messageExpression compilation failed: ...")."""

    def __init__(self, issues: str):
        super().__init__(f"compilation failed: {issues}")
        self.issues = issues


class EvaluationError(Exception):
    """Evaluation failed at run time; str() is the message Kubernetes reports."""


class LibraryError(Exception):
    """Raised by a library function; its text is the CEL error (cel-go's types.NewErr)."""


class NoSuchOverload(LibraryError):
    """The arguments match no overload of the function; a dispatcher tries the next one."""

    def __init__(self, message: str = NO_SUCH_OVERLOAD):
        super().__init__(message)


# ---- compile errors ----


def issue(source: str, pos: int, message: str) -> str:
    """One cel-go `common.Error.ToDisplayString`: location, message, source line and caret."""
    line, column = line_column(source, pos)
    text = f"ERROR: <input>:{line}:{column + 1}: {message}"
    lines = source.split("\n")
    snippet = lines[line - 1].replace("\t", " ") if line <= len(lines) else ""
    # cel-go marks every preceding code point with '.', wide (multi-byte) ones with a wide dot
    dots = "".join("." if len(ch.encode()) == 1 else "\uff0e" for ch in snippet[:column])
    caret = "^" if column >= len(snippet) or len(snippet[column].encode()) == 1 else "\uff3e"
    return f"{text}\n | {snippet}\n | {dots}{caret}"


def parse_message(expression: str, raw: str) -> str:
    """The interpreter's parse error, re-printed as cel-go prints issues."""
    prefix = f"Failed to parse expression '{expression}': "
    text = raw[len(prefix):] if raw.startswith(prefix) else raw
    # cel-rust prints the snippet lines as "| ..."; cel-go indents them by one space
    return re.sub(r"\n\| ", "\n | ", text)


# ---- runtime errors ----

_PY_CALL = re.compile(r"Python function call failed: (?:[A-Za-z_][\w.]*): (.*)\. Check function arguments and their types\.\Z",
                      re.DOTALL)
_FUNCTION = re.compile(r"Function '([^']*)' error: (.*)\. Check function arguments and their types\.\Z", re.DOTALL)
_UNDEFINED = re.compile(r"Undefined variable or function: '([^']*)'")
_REGEX = re.compile(r"'(.*)' not a valid regex:.*error: ([^\n]*)\Z", re.DOTALL)
# how the interpreter words a string that does not parse as the type converted to
_CONVERSION_FAILED = {"int": "string parse error", "uint": "string parse error", "double": "string parse error",
                      "duration": "Parsing Error", "timestamp": ""}
_CONVERTED_TO = {"int": "int", "uint": "uint", "double": "double", "duration": "google.protobuf.Duration",
                 "timestamp": "google.protobuf.Timestamp"}
_EXECUTION = re.compile(r"CEL execution error: (.*?)\. This may indicate", re.DOTALL)


def runtime_message(err: BaseException) -> str:
    """cel-go's wording for an exception raised by the interpreter."""
    text = str(err)
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    if isinstance(err, ZeroDivisionError):
        return MODULUS_BY_ZERO if "modulo" in text else DIVISION_BY_ZERO
    if isinstance(err, OverflowError):
        return INT_OVERFLOW
    if isinstance(err, IndexError):
        return text
    if isinstance(err, TypeError):
        return NO_SUCH_OVERLOAD
    return _function_message(text)


def _function_message(text: str) -> str:
    match = _PY_CALL.search(text)
    if match:
        return match.group(1)
    match = _FUNCTION.match(text)
    if match:
        inner = match.group(2)
        regex = _REGEX.match(inner)
        if regex:  # the interpreter's matches(): print it as Go's regexp errors read
            return f"error parsing regexp: {regex.group(2)}: `{regex.group(1)}`"
        if "overflow" in inner:
            return INT_OVERFLOW
        if _CONVERSION_FAILED.get(match.group(1), "\0") in inner:  # String.ConvertToType's failure
            return f"type conversion error from 'string' to '{_CONVERTED_TO[match.group(1)]}'"
        return NO_SUCH_OVERLOAD if inner.startswith("Failed to convert") else inner
    match = _UNDEFINED.match(text)
    if match:
        return f"undeclared reference to '{match.group(1)}' (in container '')"
    match = _EXECUTION.match(text)
    return match.group(1) if match else text
