#!/usr/bin/env python3
"""Draws bus bandwidth against message size, as an SVG, from weft-perf outputs.

    python3 scripts/perf-chart.py -o chart.svg [--title T] [--in-place] FILE[=LABEL] ...

Each FILE is what weft-perf printed (nccl-tests layout: size in column 1, out-of-place busbw in
column 8, in-place busbw in column 13). A curve is labelled LABEL, else with the algorithm,
protocol and channels of the file's '# weft-perf:' line. Sizes go on a log2 axis, bus bandwidth
on a linear one. Rows without a bandwidth (N/A) are skipped. Only the standard library is used,
so anyone can redraw the charts of docs/performance.md from their own runs.
"""
import argparse
import html
import math
import re
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#17becf"]


def read_curve(path, in_place):
    label = None
    points = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# weft-perf:"):
                m = re.search(r"algorithm '([^']+)' \(([^)]*)\)", line)
                if m:
                    parts = [p.strip() for p in m.group(2).split(",")]
                    label = " ".join([m.group(1)] + parts[2:])
                continue
            if line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) < 16:
                continue
            try:
                size = int(fields[0])
                busbw = float(fields[12] if in_place else fields[7])
            except ValueError:
                continue
            if size > 0:
                points.append((size, busbw))
    return label, points


def size_label(size):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale:
            return f"{size // scale}{unit}"
    return f"{size}"


def nice_step(top):
    raw = top / 6
    magnitude = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * magnitude >= raw:
            return m * magnitude
    return 10 * magnitude


def draw(curves, title, y_label):
    width, height = 900, 520
    left, right, top, bottom = 80, 250, 50, 60
    plot_w, plot_h = width - left - right, height - top - bottom
    sizes = [s for _, pts in curves for s, _ in pts]
    values = [v for _, pts in curves for _, v in pts]
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    if hi == lo:
        hi = lo + 1
    step = nice_step(max(values) if max(values) > 0 else 1)
    y_top = step * math.ceil((max(values) if max(values) > 0 else 1) / step)

    def x_of(size):
        return left + (math.log2(size) - lo) / (hi - lo) * plot_w

    def y_of(value):
        return top + plot_h - value / y_top * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left + plot_w / 2}" y="28" text-anchor="middle" font-size="15">'
           f'{html.escape(title)}</text>']
    y = 0.0
    while y <= y_top + 1e-9:
        py = y_of(y)
        out.append(f'<line x1="{left}" y1="{py:.1f}" x2="{left + plot_w}" y2="{py:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{py + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step
    exponent = math.ceil(lo)
    while exponent <= hi:
        px = x_of(2 ** exponent)
        if exponent % 2 == 0 or hi - lo <= 12:
            out.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{top + plot_h}" '
                       f'stroke="#eee"/>')
            out.append(f'<text x="{px:.1f}" y="{top + plot_h + 18}" text-anchor="middle">'
                       f'{size_label(2 ** exponent)}</text>')
        exponent += 1
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               f'stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 15}" text-anchor="middle">'
               f'message size (bytes)</text>')
    out.append(f'<text x="20" y="{top + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 20 {top + plot_h / 2})">{html.escape(y_label)}</text>')
    for i, (label, pts) in enumerate(curves):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{x_of(s):.1f},{y_of(v):.1f}" for s, v in sorted(pts))
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"/>')
        for s, v in pts:
            out.append(f'<circle cx="{x_of(s):.1f}" cy="{y_of(v):.1f}" r="2.5" '
                       f'fill="{colour}"/>')
        ly = top + 10 + i * 20
        out.append(f'<line x1="{left + plot_w + 15}" y1="{ly}" x2="{left + plot_w + 40}" '
                   f'y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{left + plot_w + 46}" y="{ly + 4}">{html.escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE[=LABEL]")
    parser.add_argument("-o", "--output", required=True, help="the SVG to write")
    parser.add_argument("--title", default="weft-perf: bus bandwidth")
    parser.add_argument("--in-place", action="store_true",
                        help="plot the in-place columns instead of the out-of-place ones")
    args = parser.parse_args()
    curves = []
    for spec in args.files:
        path, _, label = spec.partition("=")
        try:
            found, points = read_curve(path, args.in_place)
        except OSError as e:
            sys.exit(f"perf-chart: cannot read {path}: {e.strerror}")
        if not points:
            sys.exit(f"perf-chart: {path}: no result rows with a size and a bus bandwidth "
                     f"(is it weft-perf's output?)")
        curves.append((label or found or path, points))
    y_label = "bus bandwidth, GB/s (" + ("in place" if args.in_place else "out of place") + ")"
    svg = draw(curves, args.title, y_label)
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)
    except OSError as e:
        sys.exit(f"perf-chart: cannot write {args.output}: {e.strerror}")


if __name__ == "__main__":
    main()
