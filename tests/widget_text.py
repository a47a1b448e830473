"""The sentences a person sees in a widget tree (for the translation tests)."""
import html
import re

import ipywidgets as widgets

_CODE = re.compile(r"<(pre|code|textarea|style)\b.*?</\1>", re.S | re.I)  # style: the sheet
_TAG = re.compile(r"<[^>]+>")


HIDING_CLASSES = {"ari-hidden"}


def visible_strings(root) -> list[str]:
    """Every string a person reads: HTML text outside code blocks, labels, options, titles."""
    out: list[str] = []
    seen: set[int] = set()

    def walk(widget) -> None:
        if id(widget) in seen or widget is None:
            return
        seen.add(id(widget))
        layout = getattr(widget, "layout", None)
        if layout is not None and getattr(layout, "display", None) == "none":
            return
        if HIDING_CLASSES & set(getattr(widget, "_dom_classes", ())):  # hidden by wizard.css
            return
        if isinstance(widget, (widgets.HTML, widgets.HTMLMath, widgets.Label)):
            text = _CODE.sub(" ", widget.value or "")
            out.extend(s for s in html.unescape(_TAG.sub("\n", text)).split("\n") if s.strip())
        for attr in ("description", "placeholder", "tooltip"):
            value = getattr(widget, attr, None)
            if isinstance(value, str) and value.strip():
                out.append(value)
        options = getattr(widget, "_options_labels", None)
        if options:
            out.extend(str(o) for o in options)
        titles = getattr(widget, "titles", None)
        if titles:
            out.extend(str(t) for t in titles if t)
        for child in getattr(widget, "children", ()) or ():
            walk(child)

    walk(root)
    return out


_NOT_PROSE = re.compile(
    r"`[^`]*`"                      # commands
    r"|\"[^\"]*\"|'[^']*'"          # quoted tool output and values
    r"|(?:~|\$\w+|\.{0,2})?/[\w.$~+@:/-]*"  # paths
    r"|--?[\w-]+(?:=\S*)?"          # flags
    r"|\b[\w.+-]*[_=.:/\d]+[\w.+:=/-]*"   # identifiers with _ . : / = or digits
    r"|\b[A-Z][A-Z0-9_]{1,}\b"      # acronyms and variables (SLURM, GPU, ARI_SLURM_CPUS)
)
ENGLISH = re.compile(r"\b[A-Za-z]{2,}(?:\s+[A-Za-z]{2,}){2,}\b")


def english_sentences(strings) -> list[str]:
    """The strings that still read as English prose once code and names are taken out."""
    return [s for s in strings if ENGLISH.search(_NOT_PROSE.sub(" ", s))]


def shown(value: str) -> str:
    """The text a person reads in an HTML value: tags dropped, entities decoded."""
    return html.unescape(_TAG.sub("", value))


def as_shown(message: str) -> str:
    """A catalog message as the wizard shows it: its `commands` become code, without the marks."""
    return message.replace("`", "")
