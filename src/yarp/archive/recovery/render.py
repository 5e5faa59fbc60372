"""Text and JSON forms of search results (the reference's text form)."""

from __future__ import annotations

from yarp.archive.recovery.search import SearchOptions, SourceMatches


def render_search(ref: str, results: list[SourceMatches], options: SearchOptions) -> str:
    """The reference's text form: header, per-source block, groups, read hints."""
    out = [f"[yarp search: ref={ref}]"]
    for index, res in enumerate(results):
        if index:
            out.append("--")
        out.append(
            f"[source={res.source.name} complete={res.source.complete_label} matches={res.matches}"
            f" showing={len(res.shown)} before={options.before} after={options.after}"
            f" max_results={options.max_results}]"
        )
        name = res.source.name
        for group_index, (first, last) in enumerate(res.groups):
            if group_index:
                out.append("--")
            for number in range(first, last + 1):
                entry = res.lines.get(number)
                if entry is None:
                    continue
                text, selected = entry
                sep = ":" if selected else "-"
                out.append(f"{name}{sep}{number}{sep}{text}")
        if res.omitted:
            out.append(f"[yarp search: {res.omitted} selected line(s) omitted]")
        for first, last in res.groups:
            out.append(f"Read exact context: yarp read {ref} {name} {first}:{last}")
    return "\n".join(out) + "\n"


def search_json(ref: str, results: list[SourceMatches], options: SearchOptions) -> dict:
    """Search results as one JSON-ready dict, with a read command for each group of lines."""
    return {
        "ref": ref,
        "sources": [
            {
                "source": r.source.name,
                "complete": r.source.complete_label,
                "matches": r.matches,
                "showing": len(r.shown),
                "lines": [
                    {"line": n, "selected": sel, "text": text}
                    for n, (text, sel) in sorted(r.lines.items())
                ],
                "groups": [{"start": a, "end": b, "read": f"yarp read {ref} {r.source.name} {a}:{b}"}
                           for a, b in r.groups],
            }
            for r in results
        ],
        "before": options.before,
        "after": options.after,
        "max_results": options.max_results,
    }

