"""A fake search.yahoo.com: result pages shaped like the real ones (7 a page), the EU consent wall
(guce.yahoo.com's redirect to consent.yahoo.com's form), error 999 and the no-results page."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from ._html import NOT_FOUND, engine_results
from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "PAGE_SIZE",
    "FakeYahoo",
    "YahooResult",
    "consent_page",
    "error_999_page",
    "no_results_page",
    "redirect_href",
    "results_page",
    "sample_results",
]

PAGE_SIZE = 7
CONSENT_PATH = "/v2/collectConsent"
GUCE_PATH = "/consent"
SESSION_ID = "3_cc-session_0f4b2c1e-8d6a-4e2b-9c3f-7a1d5e6b8c90"

#: How a result's title is written: "label" (h3 > a[aria-label] with the breadcrumb inside the
#: anchor: the common desktop shape), "wrapped" (a > breadcrumb + h3 > span, no label), "sibling"
#: (the breadcrumb anchor, then the heading outside it), "plain" (h3 > a with the breadcrumb, no label).
Shape = Literal["label", "wrapped", "sibling", "plain"]


@dataclass(frozen=True, slots=True)
class YahooResult:
    title: str  # inserted as HTML (tests may include <b> and entities); the label is its text
    url: str
    snippet: str = ""
    ad: bool = False  # a top ad: a /cbclk2/ redirect outside the organic list
    bing_ad: bool = False  # an organic-looking block whose redirect targets Bing's aclick
    direct_href: bool = False  # the href is the target itself instead of an r.search.yahoo.com redirect
    shape: Shape = "label"


_HEAD = """<!DOCTYPE html>
<html id="atomic" class="ltr desktop Desktop bkt201" lang="en-US">
<head>
<meta http-equiv="content-type" content="text/html; charset=UTF-8">
<meta name="referrer" content="origin-when-cross-origin">
<title>{q} - Yahoo Search Results</title>
<link rel="icon" sizes="any" href="https://s.yimg.com/pv/static/img/yahoo-search-favicon.ico">
<link rel="search" type="application/opensearchdescription+xml" href="https://search.yahoo.com/opensearch.xml" title="Yahoo Search">
<style>{css}</style>
<script>{script}</script>
<script>window.YAHOO=window.YAHOO||{{}};YAHOO.SERP={{"bucket":"201","query":"{qjs}","pvid":"Q0x8wjEwLjGk5m1zZ2Y3NjQ3MTk5AAAAAADMbc9p"}};</script>
</head>
<body class="ltr desktop Desktop bkt201">
<div id="doc">
<div id="hd" class="hd">
<div id="sticky-hd" class="sticky-hd"><div class="logo"><a href="https://www.yahoo.com/" class="ybar-logo"><img src="https://s.yimg.com/rz/p/yahoo_search_en-US_h_p_search_2x.png" alt="Yahoo Search" width="134" height="30"></a></div>
<form id="sf" name="s" role="search" class="sbx" action="https://search.yahoo.com/search" method="get" data-bcn="1">
<input type="text" class="sbq" id="yschsp" name="p" value="{q}" autocomplete="off" autocorrect="off" aria-label="Search query" title="Search">
<input type="hidden" name="fr" value="sfp"><input type="hidden" name="fr2" value="sb-top"><input type="hidden" name="iscqry" value="">
<button type="submit" class="sbb" aria-label="Search"><span class="sbb-icon"></span></button>
</form></div>
<div id="horizontal-bar" class="horizontal-bar"><ul><li class="active"><span>All</span></li><li><a href="https://images.search.yahoo.com/search/images?p={qu}">Images</a></li><li><a href="https://video.search.yahoo.com/search/video?p={qu}">Videos</a></li><li><a href="https://news.search.yahoo.com/search?p={qu}">News</a></li><li><a href="https://shopping.yahoo.com/search?p={qu}">Shopping</a></li></ul>
<div class="filters"><a href="https://search.yahoo.com/search?p={qu}&amp;btf=d">Past day</a><a href="https://search.yahoo.com/search?p={qu}&amp;btf=w">Past week</a><a href="https://search.yahoo.com/search?p={qu}&amp;btf=m">Past month</a></div></div>
</div>
<div id="results"><div id="cols" class="cols"><div id="left"><div id="main" role="main"><div>
{ads}
"""

_COLORS = ("obsidian", "falcon", "dustygray", "2nd", "12th", "2015C2", "batcave", "inkwell", "charcoal", "dolphin")


def _atomic_css() -> str:
    """Yahoo's pages inline tens of kilobytes of atomic CSS (one class per property and value)."""
    rules = [
        ".compTitle h3.title{margin:0}.compText p{color:#474c55}.d-ib{display:inline-block}",
        ".p-abs{position:absolute}.searchCenterTopAds .ad-label{font-weight:700}.compPagination a{padding:0 6px}",
    ]
    for n in range(0, 64):
        rules.append(
            f".fz-{n}{{font-size:{n}px}}.lh-{n}{{line-height:{n}px}}.w-{n}{{width:{n}px}}.h-{n}{{height:{n}px}}"
        )
        for side, prop in (("t", "top"), ("b", "bottom"), ("l", "left"), ("r", "right")):
            rules.append(f".m{side}-{n}{{margin-{prop}:{n}px}}.p{side}-{n}{{padding-{prop}:{n}px}}")
            rules.append(f".{side}-{n}{{{prop}:{n}px}}.iv{side}-{n}{{margin-{prop}:-{n}px}}")
    for i, name in enumerate(_COLORS):
        shade = f"#{(0x232A31 + i * 0x0F0F0F) & 0xFFFFFF:06x}"
        rules.append(
            f".fc-{name}{{color:{shade}}}.bgc-{name}{{background-color:{shade}}}.bdc-{name}{{border-color:{shade}}}"
        )
        rules.append(f".hover .fc-{name}:hover,.fc-{name}-hover:hover{{color:{shade};text-decoration:underline}}")
    return "".join(rules)


_CSS = _atomic_css()


def _tracking_script() -> str:
    """The inline instrumentation config the real pages carry (their "rapid" beacons)."""
    spaces = [
        {"sec": f"sec{i % 23}", "slk": f"slk-{i:04d}", "pos": i, "itc": i % 2, "_p": i % 9, "ct": "std", "t1": "a"}
        for i in range(360)
    ]
    config = {
        "spaceid": 2766679,
        "client_only": 1,
        "keys": {"pt": "srp", "vtestid": "NONE", "mrkt": "us"},
        "i13n": spaces,
    }
    return "window.YAHOO=window.YAHOO||{};YAHOO.rapidConfig=" + json.dumps(config, separators=(",", ":")) + ";"


_SCRIPT = _tracking_script()

_WEB_START = """<div id="web"><h2 class="off-left">Search results</h2>
<ol class=" reg searchCenterMiddle">
"""

_TAIL = """</ol></div>
<ol class=" reg searchCenterFooter"><li class="first last"><div class="dd AlsoTry"><div class="compTitle"><h4 class="title"><span>Also try</span></h4></div>
<table class="compTable"><tbody><tr><td><a href="https://search.yahoo.com/search?p={qu}+tutorial&amp;fr2=p%3As%2Cv%3Aw%2Cm%3Ars-bottom">{q} <b>tutorial</b></a></td><td><a href="https://search.yahoo.com/search?p={qu}+examples&amp;fr2=p%3As%2Cv%3Aw%2Cm%3Ars-bottom">{q} <b>examples</b></a></td></tr></tbody></table></div></li></ol>
<div class="compPagination"><strong>{page}</strong>{next}</div>
</div></div></div></div></div>
<div id="ft"><a href="https://legal.yahoo.com/us/en/yahoo/privacy/index.html">Privacy</a> <a href="https://legal.yahoo.com/us/en/yahoo/terms/otos/index.html">Terms</a></div>
</div>
<script src="https://s.yimg.com/pv/static/js/serp-desktop.8f2c1a7b.js" async></script>
</body>
</html>
"""

_LABEL = """<li{first}><div class="dd algo algo-sr relsrch{fst} richAlgo" data-4a1="5f3b2c1d"><div class="compTitle options-toggle"><h3 style="display:block;margin-top:24px;margin-bottom:2px;" class="title tc"><a style="line-height:26px" class=" d-ib fz-20 lh-26 td-hu tc va-bot mxw-100p" href="{href}" referrerpolicy="origin" target="_blank" data-4a1="5f3b2c1e" aria-label="{label}"><span class=" d-ib p-abs t-0 l-0 fz-14 lh-20 fc-obsidian wr-bw ls-n pb-4"><span>{host}</span><span> › {crumb}</span></span>{title}</a></h3><div class="d-ib p-abs t-0 r-0 ml-10 options"><div class="menu"><a href="https://cc.bingj.com/cache.aspx?q={qu}&amp;d=4857{i}&amp;w=Qx{i}" class="txt fz-13">Cached</a></div></div></div>{snippet}</div></li>
"""

_WRAPPED = """<li{first}><div class="dd algo algo-sr relsrch{fst} Sr" data-4a1="5f3b2c1d"><div class="compTitle options-toggle"><a class="d-ib ls-05 fz-20 lh-26 td-hu tc va-bot mxw-100p" href="{href}" referrerpolicy="origin" target="_blank"><div class="thmb d-ib"><span class="fz-14 fc-obsidian">{host}</span><span class="fz-14 fc-obsidian"> › {crumb}</span></div><h3 class="title fc-2015C2-imp pt-6 ivmt-6 mxw-100p"><span>{title}</span></h3></a></div>{snippet}</div></li>
"""

_SIBLING = """<li{first}><div class="dd algo{fst}"><div class="compTitle"><a class="d-ib va-top mxw-100p" href="{href}" referrerpolicy="origin" target="_blank"><span class="d-ib va-mid">{host}</span></a><h3 class="title fc-2015C2-imp pt-6 ivmt-6 mxw-100p">{title}</h3></div>{snippet}</div></li>
"""

_PLAIN = """<li{first}><div class="dd algo algo-sr relsrch{fst}"><div class="compTitle options-toggle"><h3 class="title tc"><a class=" d-ib fz-20 lh-26 td-hu tc va-bot mxw-100p" href="{href}" referrerpolicy="origin" target="_blank"><span class=" d-ib p-abs t-0 l-0 fz-14 lh-20 fc-obsidian wr-bw ls-n pb-4"><span>{host}</span><span> › {crumb}</span></span>{title}</a></h3></div>{snippet}</div></li>
"""

_SHAPES = {"label": _LABEL, "wrapped": _WRAPPED, "sibling": _SIBLING, "plain": _PLAIN}

_SNIPPET = """<div class="compText aAbs"><p class="fz-14 lh-22"><span class=" fc-falcon">{snippet}</span></p></div>"""

_AD = """<li{first}><div class="dd SrAds ads-sr{fst}"><div class="compTitle"><h3 class="title"><a class="d-ib fz-20 lh-26 td-hu" href="{href}" referrerpolicy="origin" target="_blank" aria-label="{label}"><span class="ad-label">Ad</span> {title}</a></h3></div>{snippet}</div></li>
"""

_HEX_RE = re.compile(r"%[0-9A-F]{2}")


def redirect_href(url: str, n: int = 1, *, ad: bool = False) -> str:
    """An r.search.yahoo.com redirect to `url` as Yahoo writes it: `RU=` percent-encoded with
    lower-case hex, between the tracking segments (HTML-escaped, for an attribute)."""
    encoded = _HEX_RE.sub(lambda m: m.group(0).lower(), quote(url, safe=""))
    path = "cbclk2/dWU9QjI0MUY4RTU5MEYzNDQ3RSZ1dD0xNzkxODcyMTU2JnVvPTc4NjQ2MTQ1MTMzNDAwJmx0PTImcz0x/" if ad else ""
    return html.escape(
        f"https://r.search.yahoo.com/{path}_ylt=AwrFQl{n:03d}MbhpQ5kFMwxXNyoA;_ylu=Y29sbwNiZjEEcG9zAz{n}EdnRpZAMEc2VjA3Ny"
        f"/RV=2/RE=1791872156/RO=10/RU={encoded}/RK=2/RS=Ps3g.HR0{n:02d}kQ8N4Yv.W_5qTf5xGk-"
    )


def _host_and_crumb(url: str) -> tuple[str, str]:
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    parts = [p for p in path.split("?")[0].split("/") if p][:2]
    return host, " › ".join(parts) or host


def _js(text: str) -> str:
    """`text` inside a JS string in a <script>: quotes, backslashes and "<" escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("<", "\\u003c")


def _label(title_html: str) -> str:
    """The aria-label Yahoo writes: the title's text, tags dropped, attribute-escaped."""
    return html.escape(html.unescape(re.sub(r"<[^>]+>", "", title_html)), quote=True)


def _result_block(r: YahooResult, n: int, query: str) -> str:
    host, crumb = _host_and_crumb(r.url)
    first = ' class="first"' if n == 1 else ""
    if r.bing_ad:
        target = f"https://www.bing.com/aclick?ld=e8{n}Kq3&u={quote(r.url, safe='')}"
        href = redirect_href(target, n)
    elif r.direct_href:
        href = html.escape(r.url)
    else:
        href = redirect_href(r.url, n)
    snippet = _SNIPPET.format(snippet=r.snippet) if r.snippet else ""
    return _SHAPES[r.shape].format(
        first=first,
        fst=" fst" if n == 1 else "",
        href=href,
        label=_label(r.title),
        host=html.escape(host),
        crumb=html.escape(crumb),
        title=r.title,
        snippet=snippet,
        qu=quote(query),
        i=n,
    )


def _ads(results: Sequence[YahooResult]) -> str:
    ads = [r for r in results if r.ad]
    if not ads:
        return ""
    items = "".join(
        _AD.format(
            first=' class="first"' if i == 1 else "",
            fst=" fst" if i == 1 else "",
            href=redirect_href(f"https://www.bing.com/aclick?ld={i}&u={quote(r.url, safe='')}", i, ad=True),
            label=_label(r.title),
            title=r.title,
            snippet=_SNIPPET.format(snippet=r.snippet) if r.snippet else "",
        )
        for i, r in enumerate(ads, 1)
    )
    return f'<ol class=" reg searchCenterTopAds">{items}</ol>\n'


def results_page(query: str, results: Sequence[YahooResult], *, offset: int = 1, more: bool = False) -> str:
    """A results page as search.yahoo.com serves it: the top ads, the organic list (`results`
    that are not top ads, numbered from `offset`), the "Also try" box and the pager (with a
    "Next" link when `more`). Titles and snippets are inserted as HTML."""
    q = html.escape(query)
    qu = quote(query)
    organic = [r for r in results if not r.ad]
    blocks = "".join(_result_block(r, offset + i, query) for i, r in enumerate(organic))
    page = (offset - 1) // PAGE_SIZE + 1
    following = (
        f'<a class="next" href="https://search.yahoo.com/search?p={qu}&amp;b={offset + PAGE_SIZE}&amp;pz={PAGE_SIZE}'
        f'&amp;bct=0&amp;xargs=0">Next</a>'
        if more
        else ""
    )
    head = _HEAD.format(q=q, qu=qu, qjs=_js(query), css=_CSS, script=_SCRIPT, ads=_ads(results))
    return head + _WEB_START + blocks + _TAIL.format(q=q, qu=qu, page=page, next=following)


def no_results_page(query: str) -> str:
    """The page served when nothing matches: the results list holds only Yahoo's message."""
    q = html.escape(query)
    qu = quote(query)
    message = (
        '<li class="first"><div class="dd zrp"><div class="compText mt-15 mb-15"><p><span>We did not find results '
        f"for: </span><strong>{q}</strong><span>. Check spelling or type a new query.</span></p></div></div></li>\n"
    )
    head = _HEAD.format(q=q, qu=qu, qjs=_js(query), css=_CSS, script=_SCRIPT, ads="")
    return head + _WEB_START + message + _TAIL.format(q=q, qu=qu, page=1, next="")


def consent_page(session_id: str = SESSION_ID) -> str:
    """consent.yahoo.com's cookie-consent form, as EU visitors get it instead of results."""
    return f"""<!DOCTYPE html>
<html lang="en-GB" class="no-js"><head><meta charset="utf-8"><title>Yahoo is part of the Yahoo family of brands</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="https://s.yimg.com/oa/consent.css"></head>
<body><div id="consent-page" class="consent-container"><div class="con-wizard"><div class="wizard-body">
<h2 class="title">Yahoo is part of the Yahoo family of brands</h2>
<p class="description">When you use our sites and apps, we use cookies to provide our sites and apps to you, authenticate users,
apply security measures, and prevent spam and abuse, and measure your use of our sites and apps.</p>
<form method="post" action="https://consent.yahoo.com/v2/collectConsent?sessionId={session_id}" class="consent-form">
<input type="hidden" name="csrfToken" value="pL6s0Jx2QbW1vN9m"><input type="hidden" name="sessionId" value="{session_id}">
<input type="hidden" name="originalDoneUrl" value="https://search.yahoo.com/search?p=x"><input type="hidden" name="namespace" value="yahoo">
<div class="actions couple"><button type="submit" class="btn secondary accept-all" name="agree" value="agree">Accept all</button>
<button type="submit" class="btn secondary reject-all" name="reject" value="reject">Reject all</button></div>
<a class="btn secondary manage-settings" href="https://consent.yahoo.com/v2/partners?sessionId={session_id}">Manage privacy settings</a>
</form></div></div></div></body></html>"""


def error_999_page() -> str:
    """The body of Yahoo's status-999 answer to throttled clients."""
    return (
        "<!doctype html><html><head><title>Yahoo</title></head><body>"
        "<p>Sorry, Unable to process request at this time -- error 999.</p></body></html>"
    )


def sample_results(query: str, n: int = 30) -> list[YahooResult]:
    """`n` plausible results for `query`, with bold terms and entities like the real snippets."""
    words = html.escape(query)
    slug = quote(query.replace(" ", "-"))
    return [
        YahooResult(
            title=f"{words} &#8212; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{slug}/part-{i}?ref=yahoo&lang=en",
            snippet=(
                f"Mar {i % 28 + 1}, 2026 · Learn about <b>{words}</b> in part {i}: installation, configuration "
                f"&amp; troubleshooting. This page explains how <b>{words}</b> works under load, with benchmarks and a FAQ."
            ),
        )
        for i in range(1, n + 1)
    ]


class FakeYahoo(FakeServer):
    """Answers GET /search with page `b` (7 results a page) of `results` (default: 30 built from
    the query; `site:` operators honoured). With `consent=True` it acts as Yahoo does for EU
    visitors: /search redirects to guce's /consent, which redirects to /v2/collectConsent's form."""

    provider_id = "yahoo"

    def __init__(self, results: Sequence[YahooResult] | None = None, *, consent: bool = False) -> None:
        super().__init__()
        self.results = results
        self.consent = consent

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method == "GET" and request.path == GUCE_PATH:
            location = f"{CONSENT_PATH}?sessionId={SESSION_ID}"
            return Reply(302, b"", headers={"Location": location}, content_type="text/html")
        if request.method == "GET" and request.path == CONSENT_PATH:
            return Reply(200, consent_page(request.args.get("sessionId", SESSION_ID)), content_type="text/html")
        if request.method != "GET" or request.path != "/search":
            return NOT_FOUND
        if self.consent:
            location = f"{GUCE_PATH}?brandType=eu&gcrumb=Jp3Xq2w&done=https%3A%2F%2Fsearch.yahoo.com%2Fsearch"
            return Reply(302, b"", headers={"Location": location}, content_type="text/html")
        query = request.args.get("p", "")
        results = engine_results(query, self.results, sample_results)
        try:
            offset = max(1, int(request.args.get("b", "1")))
        except ValueError:
            offset = 1
        ads = [r for r in results if r.ad] if offset == 1 else []
        organic = [r for r in results if not r.ad]
        shown = organic[offset - 1 : offset - 1 + PAGE_SIZE]
        if not shown and not ads:
            return Reply(200, no_results_page(query), content_type="text/html; charset=UTF-8")
        more = offset - 1 + PAGE_SIZE < len(organic)
        page = results_page(query, [*ads, *shown], offset=offset, more=more)
        return Reply(200, page, content_type="text/html; charset=UTF-8")
