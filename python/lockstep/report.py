"""`lockstep compare --report DIR`: an HTML page with the summary table, one error histogram (PNG) per output and
runtime, and with --per-node the error along the graph. Needs matplotlib."""

import html
import os
import re

import numpy as np

from lockstep.comparison import FIGURES, format_figure

def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("--report needs matplotlib (pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _file_name(*parts):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(parts)) + ".png"


def _histogram(plt, path, title, errors):
    """log10 of |error| in float32 ulps of the reference value; exact elements go in the leftmost bin."""
    figure, axes = plt.subplots(figsize=(5, 3), dpi=100)
    values = np.log10(np.maximum(errors, 1e-3))
    axes.hist(values, bins=40, color="#3465a4")
    axes.set_xlabel("log10(error in ulps of the float64 value); -3: exact")
    axes.set_ylabel("elements")
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _node_plot(plt, path, nodes, runtimes):
    figure, axes = plt.subplots(figsize=(8, 3.5), dpi=100)
    for runtime in runtimes:
        errors = []
        for node in nodes:
            values = [t[runtime].get("rel_l2_vs_reference") for t in node["outputs"].values()
                      if runtime in t and t[runtime].get("rel_l2_vs_reference") is not None]
            errors.append(max(values) if values else np.nan)
        axes.plot(range(len(nodes)), np.maximum(errors, 1e-12), marker=".", label=runtime)
    axes.set_yscale("log")
    axes.set_xlabel("node (graph order)")
    axes.set_ylabel("rel-L2 error vs float64")
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _summary_table(result):
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label, _ in FIGURES)
    rows = []
    for output, entry in result["outputs"].items():
        for runtime in result["runtimes"]:
            figures = entry.get(runtime, {})
            cells = "".join(f"<td>{format_figure(figures.get(key), form)}</td>" for key, _, form in FIGURES)
            rows.append(f"<tr><td>{html.escape(output)}</td><td>{html.escape(runtime)}</td>"
                        f"<td>{format_figure(entry.get('bit_identical'), '{}')}</td>{cells}</tr>")
    return (f"<table id='summary'><tr><th>output</th><th>runtime</th><th>lockstep bit-identical</th>{head}</tr>"
            + "".join(rows) + "</table>")


def write_report(result, errors, directory):
    """Writes DIR/index.html and its PNGs. errors: (output, runtime) -> per-element error in ulps of the reference.
    Returns the page's path."""
    plt = _pyplot()
    os.makedirs(directory, exist_ok=True)
    images = []
    for (output, runtime), values in errors.items():
        name = _file_name("hist", output, runtime)
        _histogram(plt, os.path.join(directory, name), f"{output}: {runtime} vs float64", values)
        images.append((name, f"error histogram of {output} on {runtime}"))
    parts = [f"<h1>lockstep compare: {html.escape(str(result['model']))}</h1>",
             f"<p>seed {result['seed']}; runtimes: {html.escape(', '.join(result['runtimes']))}; "
             f"baseline for ulp distances: {html.escape(str(result['baseline']))}</p>",
             "<h2>Summary</h2>", _summary_table(result), "<h2>Error histograms</h2>"]
    parts += [f"<figure><img src='{n}' alt='{html.escape(alt)}'><figcaption>{html.escape(alt)}</figcaption></figure>"
              for n, alt in images]
    if "nodes" in result:
        _node_plot(plt, os.path.join(directory, "nodes.png"), result["nodes"], result["runtimes"])
        parts += ["<h2>Error along the graph</h2>", "<img src='nodes.png' alt='error along the graph'>",
                  f"<pre>{html.escape(_divergence_text(result['first_divergence']))}</pre>"]
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>lockstep compare</title><style>"
            "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;text-align:right}"
            "</style></head><body>" + "\n".join(parts) + "</body></html>")
    path = os.path.join(directory, "index.html")
    with open(path, "w") as f:
        f.write(page)
    return path


def _divergence_text(found):
    lines = []
    for pair, node in found["between"].items():
        lines.append(f"{pair}: " + ("no bit differs in any node" if node is None else
                                    f"first differs at node {node['node']} ({node['op']})"))
    for runtime, node in found["error_jump"].items():
        lines.append(f"{runtime} vs float64: " + ("no error jump" if node is None else
                                                 f"error jumps at node {node['node']} ({node['op']})"))
    return "\n".join(lines)
