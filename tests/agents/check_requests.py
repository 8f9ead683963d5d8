#!/usr/bin/env python3
"""Check what the agent-plugin specs recorded (tests/agents/*_spec.lua, RPIV_CAPTURE).

    python3 tests/agents/check_requests.py CAPTURE_DIR DEPS_DIR

* Every recorded request body that carries the `todo` tool (OpenAI chat completions and
  responses, Anthropic, Gemini; codecompanion and avante): its parameter schema must be a
  valid JSON Schema under the draft 2020-12 and draft-07 meta-schemas (Python jsonschema),
  and must accept the calls a model makes (and refuse a call without an action).
* Every todo tool sent with strict mode on must follow OpenAI's strict-mode rules (checked
  here: the rules as OpenAI's structured-outputs guide states them).
* Every ACP notification (`*-acp-*.json`) must validate as a `SessionNotification` of the
  protocol's published schema (DEPS_DIR/agent-client-protocol/schema.json).

Exits 1 on any failure, and when nothing was recorded (a check that saw nothing proves
nothing).
"""

import glob
import json
import os
import sys

import jsonschema
from jsonschema import Draft7Validator, Draft202012Validator

# Keywords OpenAI's strict mode supports (structured outputs, "Supported schemas").
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "definitions", "description", "title",
    "pattern", "format",
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "minItems", "maxItems",
}
STRICT_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
STRICT_MAX_DEPTH = 10
STRICT_MAX_PROPERTIES = 5000


def strict_violations(schema, path="parameters", depth=1, out=None, counter=None):
    """OpenAI's strict-mode rules, as a list of what breaks them."""
    out = [] if out is None else out
    counter = {"properties": 0} if counter is None else counter
    if not isinstance(schema, dict):
        out.append(f"{path}: a schema must be an object")
        return out
    if depth == 1 and ("anyOf" in schema or schema.get("type") != "object"):
        out.append(f"{path}: the root must be an object schema, not anyOf")
    if depth > STRICT_MAX_DEPTH:
        out.append(f"{path}: nested deeper than {STRICT_MAX_DEPTH} levels")
    for key in schema:
        if key not in STRICT_KEYWORDS:
            out.append(f"{path}: keyword {key!r} is not supported in strict mode")
    types = schema.get("type")
    types = [types] if isinstance(types, str) else (types or [])
    for t in types:
        if t not in STRICT_TYPES:
            out.append(f"{path}: type {t!r} is not supported")
    if "object" in types:
        props = schema.get("properties")
        if not isinstance(props, dict):
            out.append(f"{path}: an object must list its properties")
            props = {}
        if schema.get("additionalProperties") is not False:
            out.append(f"{path}: additionalProperties must be false")
        required = schema.get("required") or []
        missing = sorted(set(props) - set(required))
        extra = sorted(set(required) - set(props))
        if missing:
            out.append(f"{path}: not in required: {', '.join(missing)}")
        if extra:
            out.append(f"{path}: required names unknown properties: {', '.join(extra)}")
        counter["properties"] += len(props)
        for name, prop in props.items():
            strict_violations(prop, f"{path}.{name}", depth + 1, out, counter)
    if "items" in schema:
        strict_violations(schema["items"], f"{path}[]", depth + 1, out, counter)
    for i, alt in enumerate(schema.get("anyOf") or []):
        strict_violations(alt, f"{path}.anyOf[{i}]", depth, out, counter)
    if "enum" in schema:
        for v in schema["enum"]:
            if v is not None and types and not any(_of_type(v, t) for t in types):
                out.append(f"{path}: enum value {v!r} is not of type {types}")
    if depth == 1 and counter["properties"] > STRICT_MAX_PROPERTIES:
        out.append(f"{path}: more than {STRICT_MAX_PROPERTIES} properties")
    return out


def _of_type(v, t):
    return {
        "string": isinstance(v, str),
        "number": isinstance(v, (int, float)) and not isinstance(v, bool),
        "integer": isinstance(v, int) and not isinstance(v, bool),
        "boolean": isinstance(v, bool),
        "null": v is None,
    }.get(t, False)


def find_todo(body):
    """(parameters schema, strict flag, provider shape) of the todo tool in a body, or None."""
    for tool in (body or {}).get("tools") or []:
        fn = tool.get("function")
        if isinstance(fn, dict) and fn.get("name") == "todo":
            return fn.get("parameters"), fn.get("strict") is True, "openai-chat"
        if tool.get("name") == "todo":
            if "input_schema" in tool:
                return tool["input_schema"], False, "anthropic"
            return tool.get("parameters"), tool.get("strict") is True, "openai-responses"
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            if decl.get("name") == "todo":
                return decl.get("parameters"), False, "gemini"
    return None


# Calls a model makes, in the normal form and in the strict form.
NORMAL_CALLS = [
    {"action": "create", "subject": "Write the parser", "metadata": {"k": 1, "deep": {"a": [1]}}},
    {"action": "update", "id": 1, "status": "in_progress", "metadata": {"k": None}},
    {"action": "list", "includeDeleted": True},
]
STRICT_CALL = {
    "action": "update", "subject": None, "description": None, "activeForm": None,
    "status": "completed", "id": 1, "blockedBy": None, "addBlockedBy": [2],
    "removeBlockedBy": None, "owner": None, "metadata": '{"k":null}', "includeDeleted": None,
    # Strict mode requires every property: a call without a batch says tasks: null.
    "tasks": None,
}


def check_body(name, schema, strict, shape, failures):
    for validator in (Draft202012Validator, Draft7Validator):
        try:
            validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            failures.append(f"{name}: not a valid {validator.__name__[:-9]} schema: {e.message}"
                            f" at {list(e.absolute_path)}")
            return
    v = Draft202012Validator(schema)
    # The strict form says metadata is text (the normal form: an object).
    meta_type = (schema.get("properties") or {}).get("metadata", {}).get("type")
    strict_form = isinstance(meta_type, list) and "string" in meta_type
    for call in ([STRICT_CALL] if strict_form else NORMAL_CALLS):
        errors = [e.message for e in v.iter_errors(call)]
        if errors:
            failures.append(f"{name}: refuses a model's call {json.dumps(call)}: {errors[0]}")
    if v.is_valid({"subject": "no action"}):
        failures.append(f"{name}: accepts a call without an action")
    if strict:
        for problem in strict_violations(schema):
            failures.append(f"{name} (strict, {shape}): {problem}")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    capture, deps = sys.argv[1], sys.argv[2]
    failures = []
    seen = {}
    strict_seen = 0
    for path in sorted(glob.glob(os.path.join(capture, "*-request-*.json"))):
        name = os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        body = rec.get("body")
        if not isinstance(body, dict):
            continue
        found = find_todo(body)
        if found is None:
            continue
        schema, strict, shape = found
        label = rec.get("label", "?")
        seen.setdefault(label, set()).add(shape)
        strict_seen += 1 if strict else 0
        check_body(f"{name} ({shape})", schema, strict, shape, failures)

    acp_path = os.path.join(deps, "agent-client-protocol", "schema.json")
    acp_files = sorted(glob.glob(os.path.join(capture, "*-acp-*.json")))
    if acp_files:
        with open(acp_path, encoding="utf-8") as f:
            acp = json.load(f)
        root = {"$schema": acp.get("$schema"), "$defs": acp["$defs"],
                "$ref": "#/$defs/SessionNotification"}
        validator = Draft202012Validator(root)
        for path in acp_files:
            with open(path, encoding="utf-8") as f:
                note = json.load(f)
            errors = sorted(validator.iter_errors(note), key=lambda e: list(e.path))
            for e in errors:
                failures.append(f"{os.path.basename(path)}: not a SessionNotification: {e.message}")
            if note.get("update", {}).get("sessionUpdate") != "plan":
                failures.append(f"{os.path.basename(path)}: not a plan update")

    for label, shapes in sorted(seen.items()):
        print(f"{label}: todo schema checked in {', '.join(sorted(shapes))} request bodies")
    print(f"strict-mode bodies checked: {strict_seen}; ACP notifications checked: {len(acp_files)}")
    if not seen:
        failures.append(f"no request body with the todo tool under {capture}")
    if strict_seen == 0:
        failures.append("no strict-mode request body was recorded")
    if not acp_files:
        failures.append("no ACP notification was recorded")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
