"""``GET <base_url>/ari-jupyter/guides/<file>.md``: a shipped user guide as a web page
(``.../guides/<name>?lang=ja``: that guide in Japanese where it is translated, by redirect).

The guides are the package's own copies of ``docs/`` (:mod:`ari_jupyter.base.guides`); the
lab's Help menu and each wizard step link here, so they are read where ari-jupyter is
installed, not only in a clone. Headings get ids (``step-3`` for "3. ..."), so a step links
to its own section; screenshots are not shipped and read as their description. Only the files
of the guides folder are served. Needs the token, as every page of the server.
"""
from __future__ import annotations

import html
import re

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web

from ..base.guides import GUIDES, GUIDES_DIR, ROUTE, guide_file
from ..i18n import normalize_lang

FILE_RE = re.compile(r"^[a-z]+(?:\.(?:ja|zh))?\.md$")

PAGE = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
:root {{ color-scheme: light dark; }}
body {{ font: 15px/1.55 system-ui, sans-serif; max-width: 52rem; margin: 1.5rem auto;
       padding: 0 1rem; color: #1f1f1f; background: #fff; }}
a {{ color: #0b57d0; }}
code, pre {{ font-family: ui-monospace, monospace; background: #f3f3f3; }}
pre {{ padding: .6rem; overflow-x: auto; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .2rem .5rem; }}
.ari-guide-image {{ font-style: italic; color: #555; }}
@media (prefers-color-scheme: dark) {{
  body {{ color: #e6e6e6; background: #111; }} a {{ color: #8ab4f8; }}
  code, pre {{ background: #222; }} td, th {{ border-color: #444; }}
  .ari-guide-image {{ color: #aaa; }}
}}
</style></head><body>
{body}
</body></html>
"""


def heading_id(text: str) -> str:
    """The id of a heading: ``step-N`` for a numbered step ("3. Partition & profile" in any
    language), else its words in lower case joined by hyphens."""
    plain = re.sub(r"<[^>]+>", "", html.unescape(text)).strip()
    step = re.match(r"^(\d+)\.\s", plain)
    if step:
        return f"step-{step.group(1)}"
    return "-".join(re.findall(r"\w+", plain.lower()))


def render_guide(markdown_text: str, lang: str) -> str:
    """The page of a guide's Markdown."""
    # cold start: the Markdown renderer (nbconvert's, a jupyter_server dependency) loads only
    # when a guide is first shown
    import mistune

    class GuideRenderer(mistune.HTMLRenderer):
        def heading(self, text: str, level: int, **attrs) -> str:
            return f'<h{level} id="{heading_id(text)}">{text}</h{level}>\n'

        def image(self, text: str, url: str, title=None) -> str:
            return f'<span class="ari-guide-image">[{text}]</span>'

    to_html = mistune.create_markdown(renderer=GuideRenderer(escape=True),
                                      plugins=["table", "strikethrough"])
    first = re.search(r"^# (.+)$", markdown_text, re.M)
    title = html.escape(first.group(1)) if first else "ari-jupyter"
    return PAGE.format(lang=lang, title=title, body=to_html(markdown_text))


class GuideHandler(JupyterHandler):
    auth_resource = "ari_jupyter"
    auth_action = "read"

    @web.authenticated
    @authorized
    def get(self, name: str) -> None:
        if name in GUIDES:  # a guide by name (the Help menu): its file in ?lang=, else English
            lang = normalize_lang(self.get_argument("lang", "")) or "en"
            self.redirect(url_path_join(self.base_url, ROUTE, guide_file(name, lang)))
            return
        path = GUIDES_DIR / name
        if not FILE_RE.match(name) or not path.is_file():
            raise web.HTTPError(404, f"{name} is not a guide shipped with ari-jupyter")
        parts = name.split(".")
        lang = parts[1] if len(parts) == 3 else "en"
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(render_guide(path.read_text(encoding="utf-8"), lang))


def setup_guides_handlers(web_app) -> None:
    route = url_path_join(web_app.settings.get("base_url", "/"), ROUTE, "([^/]+)")
    web_app.add_handlers(".*$", [(route, GuideHandler)])
