"""Pure domain: identifiers, keys, NSU, clock, capture rules. No Qt, no I/O, no third-party imports."""
