"""Code 128 of a 44-character access key, drawn bar by bar with reportlab.

A numeric key is Code 128C throughout (22 symbol pairs). A key with an alphanumeric CNPJ is the
hybrid Code 128 A/C of NT Conjunta 2025.001: digits in pairs under subset C, letters (and a
digit left alone) under subset A, never subset B. reportlab and python-barcode pick B for the
letters, so the symbol values and the switches are computed here, with the fewest symbols.
"""

from __future__ import annotations

from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

# Bar/space widths in modules of the 107 Code 128 symbols (ISO/IEC 15417 table), value order;
# 106 is the stop pattern with its final 2-module bar.
_WIDTHS = (
    "212222 222122 222221 121223 121322 131222 122213 122312 132212 221213 221312 231212 112232 "
    "122132 122231 113222 123122 123221 223211 221132 221231 213212 223112 312131 311222 321122 "
    "321221 312212 322112 322211 212123 212321 232121 111323 131123 131321 112313 132113 132311 "
    "211313 231113 231311 112133 112331 132131 113123 113321 133121 313121 211331 231131 213113 "
    "213311 213131 311123 311321 331121 312113 312311 332111 314111 221411 431111 111224 111422 "
    "121124 121421 141122 141221 112214 112412 122114 122411 142112 142211 241211 221114 413111 "
    "241112 134111 111242 121142 121241 114212 124112 124211 411212 421112 421211 212141 214121 "
    "412121 111143 111341 131141 114113 114311 411113 411311 113141 114131 311141 411131 211412 "
    "211214 211232 2331112"
).split()
START_A, START_C, CODE_A, CODE_C, STOP = 103, 105, 101, 99, 106
MIN_MODULE = 0.2 * mm  # the narrowest bar a DANFE scanner must resolve
QUIET_MODULES = 10


def _value_a(ch: str) -> int:
    code = ord(ch)
    if 32 <= code <= 95:
        return code - 32
    if 0 <= code < 32:
        return code + 64
    raise ValueError(f"Caractere fora do Code 128 A: {ch!r}")


def code128_values(data: str) -> list[int]:
    """Symbol values of ``data`` (start, data, checksum, stop) using subsets A and C only,
    with the fewest symbols: C for pairs of digits, A for everything else."""
    if not data:
        raise ValueError("Código de barras sem conteúdo")
    n = len(data)
    inf = 10**9
    # cost[i][s]: symbols to encode data[i:] while in subset s (0 = A, 1 = C)
    cost = [[0, 0] for _ in range(n + 1)]
    step: list[list[tuple[int, int]]] = [[(0, 0), (0, 0)] for _ in range(n + 1)]  # (advance, next subset)
    for i in range(n - 1, -1, -1):
        pair = i + 1 < n and data[i].isdigit() and data[i + 1].isdigit() and data[i : i + 2].isascii()
        stay_a = 1 + cost[i + 1][0]
        stay_c = 1 + cost[i + 2][1] if pair else inf
        _value_a(data[i])  # raises for what neither subset can carry
        # in A: encode here, or switch to C first; in C: encode a pair, or switch to A first
        options_a = [(stay_a, (1, 0)), (1 + stay_c, (0, 1))]
        options_c = [(stay_c, (2, 1)), (1 + stay_a, (0, 0))]
        cost[i][0], step[i][0] = min(options_a, key=lambda o: o[0])
        cost[i][1], step[i][1] = min(options_c, key=lambda o: o[0])
    subset = 1 if cost[0][1] <= cost[0][0] else 0
    values = [START_C if subset else START_A]
    i = 0
    while i < n:
        advance, nxt = step[i][subset]
        if advance == 0:
            values.append(CODE_C if nxt == 1 else CODE_A)
        elif subset == 1:
            values.append(int(data[i : i + 2]))
        else:
            values.append(_value_a(data[i]))
        i += advance
        subset = nxt
    check = (values[0] + sum(pos * v for pos, v in enumerate(values[1:], start=1))) % 103
    return [*values, check, STOP]


def module_count(values: list[int]) -> int:
    return sum(sum(int(w) for w in _WIDTHS[v]) for v in values)


def draw_code128(canvas: Canvas, x: float, y: float, width: float, height: float, data: str) -> float:
    """Draw ``data`` centred in the box (x, y bottom-left, points), bars as wide as the box allows
    but never narrower than 0.2 mm; returns the module width used."""
    values = code128_values(data)
    total = module_count(values)
    module = float(max(MIN_MODULE, width / (total + 2 * QUIET_MODULES)))
    left = x + (width - total * module) / 2
    path = canvas.beginPath()
    cursor = left
    for v in values:
        for k, w in enumerate(_WIDTHS[v]):
            wide = int(w) * module
            if k % 2 == 0:  # even positions are bars, odd are spaces
                path.rect(cursor, y, wide, height)
            cursor += wide
    canvas.saveState()
    canvas.setFillColorRGB(0, 0, 0)
    canvas.drawPath(path, stroke=0, fill=1)
    canvas.restoreState()
    return module
