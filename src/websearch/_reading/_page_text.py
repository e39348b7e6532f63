"""The visible text of a whole HTML page, and the signs that a page is not the page: a bot
challenge served with status 200, or a JavaScript application shell whose text only its scripts
would write.

Used when no main content is found (the whole page's text is then given, marked as such), and to
tell an empty extraction's honest reason. One selectolax (Lexbor) parse; the walk is iterative, so a
deeply nested page cannot exhaust the recursion limit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

# elements whose content is no reader's text
SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "canvas",
        "head",
        "nav",
        "select",
        "button",
        "form",
        "-comment",
    }
)
# blocks that end a paragraph (a blank line after them), and those that only start a new line
PARAGRAPH = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "details",
        "dl",
        "figure",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "ul",
        "body",
        "html",
    }
)
LINE = frozenset({"br", "dd", "div", "dt", "figcaption", "hr", "li", "summary", "tr"})
CELL = frozenset({"td", "th"})
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])", re.I)
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
# the mount points of the common front-end frameworks, empty until their script runs
_MOUNTS = "#root, #app, #__next, #__nuxt, #___gatsby, #svelte, app-root, [data-reactroot], #main-app"
_CHALLENGE_HINTS = ("challenge-platform", "cf-chl", "cf_chl", "captcha", "_incapsula_resource")
_CAPTCHA_FRAME = re.compile(
    r"challenges\.cloudflare\.com|hcaptcha\.com|google\.com/recaptcha|recaptcha\.net|captcha-delivery\.com|"
    r"_Incapsula_Resource|arkoselabs\.com",
    re.I,
)
_CF_MARKS = (
    "#challenge-form, #challenge-running, #challenge-stage, #challenge-body-text, #cf-challenge-running, "
    "#cf-chl-widget, .cf-turnstile, #px-captcha, form[action*='__cf_chl'], form[action*='cf_chl']"
)
#: `_CAPTCHA_FRAME`'s hosts as plain lower-case text (a substring search in C; the regex over a
#: 100 KB page took 6 ms).
_CAPTCHA_HOSTS = (
    "challenges.cloudflare.com",
    "hcaptcha.com",
    "google.com/recaptcha",
    "recaptcha.net",
    "captcha-delivery.com",
    "_incapsula_resource",
    "arkoselabs.com",
)
#: The names in `_CF_MARKS`, looked for in the raw page before it is parsed.
_CF_MARK_WORDS = (
    "challenge-form",
    "challenge-running",
    "challenge-stage",
    "challenge-body-text",
    "cf-chl-widget",
    "cf-turnstile",
    "px-captcha",
    "cf_chl",
)
#: A parsed page this long is kept for the thread's next `parse` of it (fragments are not).
_KEPT_PAGE_MIN = 8192
_LAST_PAGE = threading.local()
SHELL_MIN_HTML = 5000  # bytes of HTML above which almost no text means scripts write the page
SHELL_MAX_TEXT = 200  # characters of visible text below which such a page is a shell
SHELL_HINTED_MAX_TEXT = 600  # with an empty mount point or a <noscript> about JavaScript, this much at most


def parse(html: str) -> LexborHTMLParser:
    """The Lexbor tree of a page. One fetch asks for its page's tree twice on one thread (the
    challenge check, then the hidden-text scan), so a whole page's last tree is kept per thread
    and given again for the same text: nothing here changes a tree, it is only read."""
    last: tuple[str, LexborHTMLParser] | None = getattr(_LAST_PAGE, "tree", None)
    if last is not None and (last[0] is html or last[0] == html):
        return last[1]
    tree = LexborHTMLParser(html)
    if len(html) >= _KEPT_PAGE_MIN:
        _LAST_PAGE.tree = (html, tree)
    return tree


def is_hidden(node: LexborNode) -> bool:
    """Hidden from a reader by the `hidden` attribute, aria-hidden, or an inline style."""
    attrs = node.attributes
    if "hidden" in attrs or (attrs.get("aria-hidden") or "").strip().lower() == "true":
        return True
    style = attrs.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def children(node: LexborNode) -> Iterator[LexborNode]:
    """The direct children of a node, text and comments included."""
    child = node.child
    while child is not None:
        yield child
        child = child.next


def text_of(root: LexborNode | None, *, skip_hidden: bool = True, limit: int | None = None) -> str:
    """The readable text under `root`: blocks on their own lines, skipped elements left out. With
    `limit`, the walk stops once its text passed that many characters (whoever only asks "is
    there more than this?" need not walk a 100 KB page: 20 ms); passed is told by the characters
    that are not blanks, which the tidied text keeps all of."""
    if root is None:
        return ""
    parts: list[str] = []
    stack: list[tuple[LexborNode, bool]] = [(root, False)]
    seen = 0  # characters that are not blanks: the tidied text is at least this long
    while stack:
        if limit is not None and seen > limit:
            break
        node, leaving = stack.pop()
        tag = node.tag or ""
        if leaving:
            parts.append("\n\n")
            continue
        if tag == "-text":
            text = node.text_content or ""
            parts.append(text)
            if limit is not None:
                seen += sum(map(len, text.split()))  # Unicode's blanks: never more than tidy keeps
            continue
        if tag in SKIP or tag.startswith("-") or (skip_hidden and is_hidden(node)):
            continue
        if tag in PARAGRAPH:
            parts.append("\n\n")
            stack.append((node, True))
        elif tag in LINE:
            parts.append("\n")
        elif tag in CELL:
            parts.append(" ")
        stack.extend((child, False) for child in reversed(list(children(node))))
    return tidy("".join(parts))


def tidy(text: str) -> str:
    """Spaces collapsed within lines, at most one blank line between paragraphs."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def visible_text(tree: LexborHTMLParser) -> str:
    """The text a person sees on the whole page (no scripts, styles, navigation, hidden elements)."""
    return text_of(tree.body or tree.root)


_CHALLENGE_MAX_TEXT = 1500  # visible characters a challenge page has at most


def is_challenge(html: str, tree: LexborHTMLParser | None = None, *, extracted: int | None = None) -> bool:
    """A bot challenge served in place of the page, told by its structure: Cloudflare's challenge
    form and stage elements, or a CAPTCHA frame or challenge script on a page with almost no text
    of its own. (Cloudflare also puts a `challenge-platform` script on ordinary pages, so that
    script alone is no sign.) A page without any of their names is passed without parsing.

    `extracted`: how many characters an extractor already found on the page. Far more than a
    challenge shows means a CAPTCHA frame there guards a form (a comment box under an article),
    and the page is passed without parsing it again."""
    lowered = html.lower()  # one pass in C; a case-insensitive regex over 100 KB costs ten times more
    if not any(hint in lowered for hint in _CHALLENGE_HINTS):
        return False
    # Before parsing (a millisecond or two on a large page, and "captcha" is on many ordinary
    # pages): without a mark's name, a captcha frame's host or Cloudflare's options there is none.
    marks = any(word in lowered for word in _CF_MARK_WORDS)
    if not marks and not (any(host in lowered for host in _CAPTCHA_HOSTS) or "_cf_chl_opt" in lowered):
        return False
    if not marks and extracted is not None and extracted > 2 * _CHALLENGE_MAX_TEXT:
        return False  # the visible text holds the extract, so it is far over what a challenge has
    tree = tree or parse(html)
    if tree.css_first(_CF_MARKS) is not None:
        return True
    sources = (n.attributes.get("src") or "" for n in tree.css("iframe[src], script[src]"))
    marked = any(_CAPTCHA_FRAME.search(src) for src in sources) or any(
        "_cf_chl_opt" in (n.text() or "") for n in tree.css("script")
    )
    return marked and len(text_of(tree.body or tree.root, limit=_CHALLENGE_MAX_TEXT)) <= _CHALLENGE_MAX_TEXT


def is_app_shell(html_size: int, tree: LexborHTMLParser, visible: str) -> bool:
    """A page whose text only scripts would write: large HTML with scripts and almost no visible
    text, or an empty framework mount point or a `<noscript>` about JavaScript on a page with little
    text. A page without any script is never one (its little text is all it has)."""
    if len(visible) >= SHELL_HINTED_MAX_TEXT or tree.css_first("script") is None:
        return False
    if html_size > SHELL_MIN_HTML and len(visible) < SHELL_MAX_TEXT:
        return True
    for mount in tree.css(_MOUNTS):
        if not text_of(mount, skip_hidden=False):
            return True
    return any("javascript" in (n.text() or "").lower() for n in tree.css("noscript"))
