#!/usr/bin/env python3
"""Draws docs/benchmarks-chart.svg from a CodecBenchmarks report: size ratio against compress speed,
one point per corpus, one colour per codec case. Standard library only.

    python3 benchmarks/chart.py benchmarks/results/CodecBenchmarks-quick.md docs/benchmarks-chart.svg
"""
import math
import sys


def rows(path):
    header = None
    for line in open(path, encoding="utf-8"):
        cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
        if header is None:
            if "Method" in cells and "Case" in cells:
                header = cells
            continue
        if len(cells) != len(header) or set(line.strip()) <= set("|-: "):
            continue
        yield dict(zip(header, cells))


def number(text):
    try:
        return float(text.replace(",", "").replace("**", ""))
    except ValueError:
        return None


def main(source, target):
    points = []
    for r in rows(source):
        if r.get("Method") != "Compress":
            continue
        ratio, speed = number(r.get("Size ratio", "")), number(r.get("MB/s", ""))
        if ratio and speed:
            points.append((r["Case"], r["Corpus"], ratio, speed))
    if not points:
        sys.exit(f"no Compress rows with 'Size ratio' and 'MB/s' in {source}")

    width, height, left, right, top, bottom = 760, 460, 70, 180, 30, 50
    xs = [math.log10(p[3]) for p in points]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y1 = math.ceil(max(p[2] for p in points) + 0.5)
    sx = lambda v: left + (math.log10(v) - x0) / (x1 - x0) * (width - left - right)
    sy = lambda v: height - bottom - v / y1 * (height - top - bottom)
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]
    cases = list(dict.fromkeys(p[0] for p in points))
    corpora = list(dict.fromkeys(p[1] for p in points))
    shapes = ["circle", "square", "diamond", "triangle"]

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">Size ratio against compress speed (one point per corpus)</text>']
    for e in range(x0, x1 + 1):
        x = sx(10 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{10 ** e:g}</text>')
    for v in range(0, y1 + 1):
        y = sy(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">compress MB/s (log scale)</text>')
    out.append(f'<text x="18" y="{(top + height - bottom) / 2}" transform="rotate(-90 18 {(top + height - bottom) / 2})" text-anchor="middle">raw / envelope bytes</text>')

    def mark(shape, x, y, colour):
        if shape == "circle":
            return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"/>'
        if shape == "square":
            return f'<rect x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" fill="{colour}"/>'
        if shape == "diamond":
            return f'<polygon points="{x:.1f},{y - 6:.1f} {x + 6:.1f},{y:.1f} {x:.1f},{y + 6:.1f} {x - 6:.1f},{y:.1f}" fill="{colour}"/>'
        return f'<polygon points="{x:.1f},{y - 6:.1f} {x + 6:.1f},{y + 5:.1f} {x - 6:.1f},{y + 5:.1f}" fill="{colour}"/>'

    for case, corpus, ratio, speed in points:
        out.append(mark(shapes[corpora.index(corpus) % len(shapes)], sx(speed), sy(ratio), palette[cases.index(case) % len(palette)]))
    ly = top + 10
    for i, case in enumerate(cases):
        out.append(mark("circle", width - right + 20, ly, palette[i % len(palette)]))
        out.append(f'<text x="{width - right + 32}" y="{ly + 4}">{case}</text>')
        ly += 18
    ly += 10
    for i, corpus in enumerate(corpora):
        out.append(mark(shapes[i % len(shapes)], width - right + 20, ly, "#555"))
        out.append(f'<text x="{width - right + 32}" y="{ly + 4}">{corpus}</text>')
        ly += 18
    out.append("</svg>")
    open(target, "w", encoding="utf-8").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
