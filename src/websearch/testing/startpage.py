"""A fake www.startpage.com: results pages shaped like the real ones (server-rendered result markup
and the same results as JSON props in the hydration script), paging by `sc` token, the CAPTCHA
page and the Anubis proof-of-work gate, the empty page.

The markup follows a results page captured in 2026 (Emotion `css-*` classes, `<style>` elements
inside the first result, the favicon, site-title and display-URL links before the title link, the
Anonymous View link after the snippet); the props follow the shape of `UIStartpage.AppSerpWeb`'s
(`render.search_sc`, `render.segment`, `render.presenter.pagination`,
`render.presenter.regions.mainline[]` with `display_type` blocks).
"""

from __future__ import annotations

import html
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from ._html import NOT_FOUND, engine_results, html_reply
from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "FakeStartpage",
    "SpResult",
    "anubis_page",
    "captcha_page",
    "legacy_results_page",
    "no_results_page",
    "results_page",
    "sample_results",
]

PAGE_SIZE = 10
SEGMENT = "startpage.udog"


@dataclass(frozen=True, slots=True)
class SpResult:
    """One result. `title` and `snippet` are HTML (so tests can include `<b>` and entities), as
    Startpage's props carry them. An `ad` goes into the `ads-google-top` block of the props and is
    not in the markup (Google's ad script renders ads in the browser)."""

    title: str
    url: str
    snippet: str = ""
    ad: bool = False


_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>Startpage Search Results</title>
<link rel="icon" href="/sp/cdn/favicons/favicon--default.ico">
<link rel="preload" href="/sp/cdn/ui/startpage-ui.8f3a2c1d.js" as="script">
<link rel="search" type="application/opensearchdescription+xml" href="/sp/cdn/opensearch/en/opensearch.xml" title="Startpage">
<style data-emotion="css-global 1r2l5hn">html{{-webkit-text-size-adjust:100%;}}body{{margin:0;font-family:Inter,-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;color:#202945;background:#fff;}}a{{color:inherit;}}</style>
<style data-emotion="css 1og29rd 1kfqg5z o7i03b">.css-1og29rd{{max-width:652px;}}.css-1kfqg5z{{margin:32px 0;}}.css-o7i03b{{margin-bottom:28px;max-width:652px;}}</style>
</head>
<body>
<div id="root"><div class="layout-web css-1mg4o0n">
<header class="header css-1l2v6bq"><div class="header-top css-7h9xow">
<a href="/" class="logo-link css-1jx3m4v" aria-label="Startpage"><span class="logo">Startpage</span></a>
<form id="search" action="/sp/search" method="post" class="search-form css-12xbc0u" role="search">
<input type="text" name="query" id="q" value="{q}" autocomplete="off" aria-label="search" class="search-form-input css-1vp5dr0">
<input type="hidden" name="t" value="device">
<input type="hidden" name="lui" value="english">
<input type="hidden" name="sc" value="{sc}">
<input type="hidden" name="cat" value="web">
<input type="hidden" name="abd" value="0">
<input type="hidden" name="abe" value="0">
<input type="hidden" name="segment" value="{segment}">
<button type="submit" class="search-btn css-1ut4r1w" aria-label="Startpage Search button"></button>
</form></div>
<nav class="inline-nav-menu css-5d0ifr" aria-label="search categories"><a class="inline-nav-menu-item active" href="#">Web</a><a class="inline-nav-menu-item" href="#">Images</a><a class="inline-nav-menu-item" href="#">Videos</a><a class="inline-nav-menu-item" href="#">News</a></nav>
</header>
<section id="main" class="main css-1lw3fci">
<div class="w-gl css-1og29rd"><span class="w-gl-attribution css-3k7tpe">Web results</span>
"""

_STYLES = (
    '<style data-emotion="css i3irj7">.css-i3irj7{margin:0;font-size:20px;font-weight:400;line-height:26px;'
    "color:#2E39B3;}</style>"
)

_RESULT = """<div class="result css-o7i03b"><div class="upper css-4wnopv"><a href="{href}" rel="noopener nofollow" target="_blank" aria-label="{href}" aria-hidden="false" data-testid="result-favicon" title="" tabindex="0" class="favicon-link css-n7c8hp"><div class="favicon-container css-rwvbo4"><div tabindex="-1" class="favicon css-t84qzr"><img class="no-script-hide css-pznjws" height="16px" width="16px" src="" alt="favicon" loading="lazy" data-testid="test-image"><noscript><img src="" height="16px" width="16px" alt="favicon" class="css-1gwoof1"/></noscript></div></div></a><div class="wgl-title-link-container css-1gz2b5f"><a href="{href}" rel="noopener nofollow" target="_blank" aria-label="link" aria-hidden="false" data-testid="" title="" tabindex="0" class="wgl-site-title css-1d1wvpc"><span class="link-text">{site}</span></a><a href="{href}" rel="noopener nofollow" target="_blank" aria-label="{href}" aria-hidden="false" data-testid="" title="" tabindex="0" class="wgl-display-url css-u4i8t0"><span class="link-text default-link-text css-1h1cbur">{href}</span><span class="link-text structured-link-text css-11jm68n"><span>{origin}<!-- --> </span>{crumbs}</span></a></div></div><a class="result-title result-link css-1bggj8v" href="{href}" target="_blank" rel="noopener nofollow noreferrer" aria-label="{label}" tabindex="0" data-testid="gl-title-link">{styles}<h2 class="wgl-title css-i3irj7">{title}</h2></a><p class="description css-1507v2l">{snippet}</p><div class="wgl-sitelinks css-1gxzbz3" data-testid="sitelinks"><div class="wgl-oneline css-o3hplb e11ezfp90"></div></div><div class="anonymous-view-link css-1dy6jzj"><a href="{anon}" target="_blank" rel="noopener noreferrer" aria-label="Visit in Anonymous View" class="css-tq7mti"><div class="inner css-s5xdrg"><svg width="16" height="8" viewBox="0 0 16 8" fill="none" xmlns="http://www.w3.org/2000/svg" aria-label="Anonymous View Mask" aria-hidden="true"><path d="M8.017 0C-3.048 0-.923 8 4.055 8c1.99 0 2.745-2.234 3.962-2.234C9.233 5.766 9.988 8 11.978 8 16.956 8 19.082 0 8.017 0Z" fill="#6573FF"></path></svg><span>Visit in Anonymous View</span></div></a></div></div>
"""

_TAIL = """</div>
<div class="pagination-container css-1kfqg5z"><nav class="pagination" aria-label="more search results">{pager}</nav></div>
</section>
<footer class="footer css-1n5mh7k"><a href="/en/privacy-policy/">Privacy policy</a> <a href="/en/about-us/">About us</a> <a href="/do/settings">Settings</a></footer>
</div></div>
<script src="/sp/cdn/ui/startpage-ui.8f3a2c1d.js"></script>
<script>
  var rootNode = document.getElementById('root');
  function hydrateSSR() {{
    if (typeof UIStartpage.AppSerpWeb === 'undefined') {{
      var errMsg = "Hydration failed. 'UIStartpage.AppSerpWeb' is undefined"
      return
    }}
    ReactDOM.hydrateRoot(
      rootNode,
      React.createElement(UIStartpage.AppSerpWeb, {props})
    )
    window.dispatchEvent(new Event('app:hydrated'))
  }}
  if (document.readyState !== 'loading') {{ hydrateSSR() }} else {{ document.addEventListener('DOMContentLoaded', hydrateSSR) }}
</script>
</body>
</html>
"""

_PAGER = """<form action="/sp/search" method="post" class="pagination__form css-1lf3vbc"><input type="hidden" name="query" value="{q}"><input type="hidden" name="cat" value="web"><input type="hidden" name="sc" value="{sc}"><input type="hidden" name="t" value="device"><input type="hidden" name="segment" value="{segment}"><input type="hidden" name="page" value="{n}"><button type="submit" class="pagination__next-prev-button next css-2h5q0o">Next</button></form>"""


def _plain(fragment: str) -> str:
    """The text of an HTML fragment (for attributes that hold it as text)."""
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


def _site(url: str) -> str:
    """The site name Startpage shows above a result ("Example0" for docs.example0.org)."""
    host = (urlsplit(url).hostname or "") if "//" in url else ""
    return host.removeprefix("www.").removeprefix("docs.").split(".")[0].capitalize() or url


def _markup(results: Sequence[SpResult]) -> str:
    blocks = []
    for i, r in enumerate(r for r in results if not r.ad):
        parts = urlsplit(r.url) if "//" in r.url else None
        origin = f"{parts.scheme}://{parts.netloc}" if parts else r.url
        crumbs = "".join(
            f"<span>&nbsp;›&nbsp;</span><span> <!-- -->{html.escape(p)}<!-- --> </span>"
            for p in (parts.path.split("/") if parts else ())
            if p
        )
        blocks.append(
            _RESULT.format(
                href=html.escape(r.url),
                site=html.escape(_site(r.url)),
                origin=html.escape(origin),
                crumbs=crumbs,
                label=html.escape(_plain(r.title)),
                styles=_STYLES if i == 0 else "",
                title=r.title,
                snippet=r.snippet,
                anon=_anonymous_view(r.url),
            )
        )
    return "".join(blocks)


def _anonymous_view(url: str) -> str:
    token = url.encode().hex()[:96]
    return f"https://eu2-browse.startpage.com/av/proxy?ep={token}&amp;ek=5547&amp;ekdata=f27e4770e433ab5dac91"


def _props(query: str, results: Sequence[SpResult], page: int, sc: str, more: bool, segment: str) -> dict[str, Any]:
    web: list[dict[str, Any]] = [
        {
            "title": r.title,
            "clickUrl": r.url,
            "description": r.snippet,
            "displayUrl": r.url,
            "siteLinks": [],
            "anonViewUrl": html.unescape(_anonymous_view(r.url)),
            "siteTitleData": _site(r.url),
            "sourceIndex": i,
            "richSnippet": None,
        }
        for i, r in enumerate(r for r in results if not r.ad)
    ]
    ads = [
        {"title": r.title, "clickUrl": r.url, "description": r.snippet, "page_options": {"adPage": page}}
        for r in results
        if r.ad
    ]
    pages: list[dict[str, Any]] = []
    if page > 1:
        pages.append({"name": "Previous", "selected": False, "nextPrev": True, "number": page - 1})
    pages += [
        {"name": str(n), "selected": n == page, "nextPrev": False, "number": n} for n in range(1, page + 1 + more)
    ]
    if more:
        pages.append({"name": "Next", "selected": False, "nextPrev": True, "number": page + 1})
    return {
        "render": {
            "query": query,
            "search_sc": sc,
            "segment": segment,
            "language": "english",
            "lui": "english",
            "presenter": {
                "pagination": {"current": page, "pages": pages},
                "pagination_backends": ["google"],
                "regions": {
                    "mainline": [
                        {"display_type": "spellsuggest-google", "presented_count": 0, "results": []},
                        {"display_type": "ads-google-top", "presented_count": len(ads), "results": ads},
                        *(
                            [
                                {
                                    "display_type": "web-google",
                                    "presented_count": len(web),
                                    "backfill": False,
                                    "results": web,
                                }
                            ]
                            if web
                            else []
                        ),
                        {"display_type": "ads-google-bottom", "presented_count": 0, "results": []},
                    ],
                    "sidebar": [{"display_type": "enrichment_slot-enrichment_engine", "results": [{}]}],
                },
            },
        },
        "translations": {
            "all_category": "All",
            "next": "Next",
            "previous": "Previous",
            "visit_in_anonymous_view": "Visit in Anonymous View",
            "no_results": "No results found for {0}",
        },
    }


def _script_json(value: Any) -> str:
    """JSON as a page's script embeds it: non-ASCII as is, `</` escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def results_page(
    query: str,
    results: Sequence[SpResult],
    *,
    page: int = 1,
    sc: str = "Q7Mt5TRqowKB00",
    more: bool = False,
    segment: str = SEGMENT,
    props: bool = True,
    markup: bool = True,
) -> str:
    """A results page as www.startpage.com serves it: the result markup and the props script
    (`props=False` leaves the script out, `markup=False` the blocks). `more` adds a next page."""
    q = html.escape(query)
    pager = _PAGER.format(q=q, sc=html.escape(sc), segment=segment, n=page + 1) if more else ""
    body = _markup(results) if markup else ""
    script = _script_json(_props(query, results, page, sc, more, segment)) if props else "{}"
    tail = _TAIL.format(pager=pager, props=script)
    if not props:
        tail = tail.replace("React.createElement(UIStartpage.AppSerpWeb, {})", "null")
    return _HEAD.format(q=q, sc=html.escape(sc), segment=segment) + body + tail


def no_results_page(query: str, sc: str = "Q7Mt5TRqowKB00", *, props: bool = True) -> str:
    """The page served when nothing matches: props without a web block, a no-results line. With
    `props=False`, the shape Startpage serves too: no props script at all, only the
    `mainline-results__notice` block in the results column."""
    q = html.escape(query)
    page = results_page(query, [], sc=sc, props=props)
    if props:
        line = f'<div class="no-results css-1ytbahp"><h2>No results found for <b>{q}</b></h2></div>\n'
    else:
        line = (
            f'<div class="mainline-results__notice css-1ytbahp"><h2>No results found for <b>{q}</b></h2>'
            "<p>Check the spelling, or try other or fewer words.</p></div>\n"
        )
    return page.replace('<span class="w-gl-attribution css-3k7tpe">Web results</span>\n', line, 1)


def legacy_results_page(query: str, results: Sequence[SpResult]) -> str:
    """A results page of the older layout (before 2023): `div.w-gl__result` blocks, no props."""
    q = html.escape(query)
    blocks = "".join(
        f'<div class="w-gl__result"><div class="w-gl__result__main"><div class="w-gl__result-second-line-container">'
        f'<a class="w-gl__result-url result-link" href="{html.escape(r.url)}">{html.escape(r.url)}</a></div>'
        f'<a class="w-gl__result-title result-link" href="{html.escape(r.url)}" data-testid="gl-title-link">'
        f"<h3>{r.title}</h3></a>"
        f'<p class="w-gl__description">{r.snippet}</p></div></div>\n'
        for r in results
        if not r.ad
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Startpage.com Search results</title></head>'
        '<body><form id="search" action="/sp/search" method="post">'
        f'<input type="text" name="query" value="{q}"><input type="hidden" name="sc" value="HLlIFdefdQOM20"></form>'
        f'<div class="mainline-results"><section class="w-gl w-gl--default">{blocks}</section></div></body></html>'
    )


def captcha_page() -> str:
    """The page /sp/captcha serves (Startpage redirects suspected bots there)."""
    return """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Startpage Captcha</title>
<link rel="stylesheet" href="/sp/cdn/captcha/captcha.css"></head>
<body><div class="container"><h1>CAPTCHA Verification</h1>
<p>Your search has been flagged as potentially automated. Please complete the CAPTCHA below to continue.</p>
<form class="captcha-section" action="/sp/captcha/verify" method="post">
<input type="hidden" name="t" value="1790604044T96ad">
<div class="captcha-image"><img src="/sp/captcha/image?t=1790604044T96ad" alt="captcha"></div>
<input type="text" name="captcha_response" autocomplete="off" aria-label="Enter the characters">
<button type="submit">Submit</button></form></div></body></html>"""


def anubis_page() -> str:
    """The Anubis proof-of-work gate Startpage puts in front of /sp/search for some networks."""
    challenge = {
        "rules": {"algorithm": "fast", "difficulty": 4},
        "challenge": {"id": "01a0e851-4f59-7785", "method": "fast", "randomData": "a2f0fe31c167", "spent": False},
    }
    return f"""<!doctype html><html lang="en"><head><title>Making sure you&#39;re not a bot!</title>
<link rel="stylesheet" href="/.within.website/x/xess/xess.min.css">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta name="robots" content="noindex,nofollow">
<script id="anubis_version" type="application/json">"v1.26.4"
</script><script id="anubis_challenge" type="application/json">{json.dumps(challenge)}
</script><script id="anubis_base_prefix" type="application/json">""
</script><script async type="module" src="/.within.website/x/cmd/anubis/static/js/main.mjs"></script>
</head><body id="top"><main><h1 id="title" class="centered-div">Making sure you&#39;re not a bot!</h1>
<div class="centered-div"><img id="image" style="width:100%;max-width:256px;" src="/.within.website/x/cmd/anubis/static/img/pensive.webp" alt="">
<p id="status">Loading...</p><p>Please wait a moment while we ensure the security of your connection.</p></div>
<div id="progress" role="progressbar" aria-labelledby="status"><div class="bar-inner"></div></div>
<noscript><p>Sadly, you must enable JavaScript to get past this challenge.</p></noscript></main></body></html>"""


def sample_results(query: str, n: int = 30) -> list[SpResult]:
    """`n` plausible results for `query`: bold terms, entities and Google's date prefixes, as the
    real snippets have them."""
    words = html.escape(query)
    slug = quote(query.replace(" ", "-"))
    dated = {1: "Mar 3, 2026 <b>...</b> ", 3: "4 days ago <b>...</b> "}
    return [
        SpResult(
            title=f"{words} &#8212; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{slug}/part-{i}?ref=sp&lang=en",
            snippet=(
                f"{dated.get(i % 5, '')}Learn about <b>{words}</b> in part {i}: installation, configuration &amp; "
                f"troubleshooting. This page explains how <b>{words}</b> works under load, with benchmarks, "
                f"examples and a FAQ covering the most common questions asked in {2020 + i % 6}&nbsp;..."
            ),
        )
        for i in range(1, n + 1)
    ]


class FakeStartpage(FakeServer):
    """Answers GET and POST /sp/search with a results page for the query and `page`, 10 results a
    page. A POST must carry an `sc` token a page of this fake issued, as Startpage's does: an
    invented one is redirected to /sp/captcha, which serves the CAPTCHA page."""

    provider_id = "startpage"

    def __init__(self, results: Sequence[SpResult] | None = None) -> None:
        super().__init__()
        self.results = results
        self.issued: list[str] = []  # the sc tokens handed out, in order
        self._tokens = itertools.count()

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.path.startswith("/sp/captcha"):
            return html_reply(captcha_page())
        if request.path != "/sp/search" or request.method not in ("GET", "POST"):
            return NOT_FOUND
        fields = dict(request.query) if request.method == "GET" else dict(request.form())
        if request.method == "POST" and fields.get("sc") not in self.issued:
            return Reply(302, "", headers={"Location": "/sp/captcha?rf=search"})
        query = fields.get("query", "")
        try:
            page = max(1, int(fields.get("page") or 1))
        except ValueError:
            page = 1
        results = engine_results(query, self.results, sample_results)
        organic = [r for r in results if not r.ad]
        chunk = organic[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        if page == 1:
            chunk = [r for r in results if r.ad] + chunk
        sc = f"Q7Mt5TRqow{next(self._tokens):04d}"
        self.issued.append(sc)
        more = len(organic) > page * PAGE_SIZE
        body = results_page(query, chunk, page=page, sc=sc, more=more)
        return html_reply(body)
