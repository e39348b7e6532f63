"""A fake www.mojeek.com: result pages shaped like the real ones, its block pages, no results.

The result page follows a real one (tests/pages/mojeek/, see its SOURCE.md): the list
`ul.results-standard` of `li.rN` blocks between `<!--rs-->` / `<!--re-->` comments (a second result
from the same host is `li.rN.clu-result`), each with the breadcrumb link `a.ob` (`p.i > span.url`),
the title link `h2 > a.title`, the snippet `p.s` (query words in `<strong>`) and `p.more`, a relative
link to a `site:` search of the host; around it the header with the search form, the options bar
(region links `reg=uk|de|fr|eu`), the result count in `div.top-info`, the pagination (`s=11`,
`s=21`, ...), the "Try elsewhere" links, the summary link in the right column and the footer.
Mojeek's text ads are not in the served HTML (a script, jsad.js, fills them in), so there are none
here either. The no-results page is the same chrome with a `top-info` line and no list (a real one
has "no results container, but the ordinary title and chrome").

Like the real site it answers `s=0` or `s=1` and an empty parameter with its 403 "automated
queries" page (searx#1736, searxng#4307), `s=11`, `s=21`, ... with the next pages, and a page past
the last result with the no-results page.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

from ._html import NOT_FOUND, engine_results
from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "FakeMojeek",
    "MojeekResult",
    "blocked_page",
    "captcha_page",
    "no_results_page",
    "results_page",
    "sample_results",
]

#: Results on one page, as Mojeek shows them.
PAGE_SIZE = 10


@dataclass(frozen=True, slots=True)
class MojeekResult:
    title: str
    url: str
    snippet: str = ""
    no_title_link: bool = False  # only the `a.ob` link carries the URL; the `h2` is plain text


_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><meta name="referrer" content="origin"><meta name="viewport" content="width=device-width, initial-scale=1.0"><meta name="apple-mobile-web-app-capable" content="yes"><meta http-equiv="X-UA-Compatible" content="IE=edge"><link rel="me" href="https://mastodon.social/@Mojeek">
<title>{q} - Mojeek Search</title>
<link id="theme" rel="stylesheet" type="text/css" href="/css/style.css?v=2.119"><link rel="shortcut icon" href="/favicon.ico"><link rel="search" type="application/opensearchdescription+xml" title="Mojeek" href="https://www.mojeek.com/opensearch.xml"><link rel="canonical" href="https://www.mojeek.com/search">
</head><body data-theme="light" class="serp-grid left-aligned">
<!-- status="OK" -->
<div class="large-footer"><div class="header nb"><div class="header-container">
<div class="header-logo"><a href="https://www.mojeek.com"><img src="/logos/logo_cc.svg" width="120" height="36" alt="Mojeek"></a></div>
<div class="header-form"><div class="sf1"><form method="get" action="/search" name="sf1"><input type="text" class="js-search-input" maxlength="256" name="q" value="{q}" placeholder="Search The Web using Mojeek..." tabindex="0"><a href="#" class="js-clear-search-btn" tabindex="0" role="button" style="visibility: visible">&#10005;</a><button type="submit" tabindex="0"><span class="svg-icon search"></span></button></form></div></div>
<div class="hamburger-ctn" tabindex="0" role="button"><nav class="main-nav"><ul>
<li class="pr open-item"><ul><li><a href="/"><span class="t">Web</span></a></li><li><a href="/images"><span class="t">Images</span></a></li><li><a href="/news"><span class="t">News</span></a></li><li><a href="/blogs"><span class="t">Substack</span></a></li></ul></li>
<li class="pr"><ul><li><a href="/about/"><span class="t">About</span></a></li><li><a href="/ads/"><span class="t">Mojeek Ads</span></a></li><li><a href="/support/api/"><span class="t">API Docs</span></a></li><li><a href="https://blog.mojeek.com/"><span class="t">Blog</span></a></li></ul></li>
</ul></nav></div>
</div></div>
<div class="opts-bar"><div class="container"><div class="inner">
<div class="left"><ul><li class="selected"><a href="/search?q={qp}">Web</a></li><li><a href="https://www.mojeek.com/search?q={qp}&amp;fmt=summary">Summary</a></li><li><a href="https://www.mojeek.com/search?q={qp}&amp;fmt=images">Images</a></li><li><a href="https://www.mojeek.com/search?q={qp}&amp;fmt=news">News</a></li></ul></div>
<div class="right"><ul><li><div class="popover"><ul><li><a href="/search?q={qp}&amp;reg=uk">United Kingdom</a></li><li><a href="/search?q={qp}&amp;reg=de">Germany</a></li><li><a href="/search?q={qp}&amp;reg=fr">France</a></li><li><a href="/search?q={qp}&amp;reg=eu">European Union</a></li><li><a href="/search?q={qp}&amp;reg=">All Regions</a></li></ul></div></li>
<li><div class="popover"><ul><li><a href="/advanced.html">Advanced Search</a></li><li><a href="/preferences">Preferences</a></li><li><a href="/preferences?tab=location-language">Language <span class="serp-lang-opt">English</span></a></li></ul></div></li></ul></div>
</div></div></div>
<div class="container serp-results">
"""

_COUNT = """<div class="top-info"><div class="results-count-container"><div class="js-results-cnt-bar"><p>Results {first} to {last} from {total} in 0.37s</p></div></div></div>
"""

_RESULT = """<!--rs--><li class="r{n}{clu}"><a title="{href}" href="{href}" class="ob"><p class="i"><span class="url">{display}</span></p></a>
<h2>{heading}</h2>
{snippet}<p class="more"><a href="/search?q=site%3A{host}+{qp}">See more results from {host} &#187;</a></p>
</li><!--re-->
"""

_TAIL = """<div class="scb"><p>Try elsewhere:</p><a href="/search?q={qp}&amp;sc=Brave">Brave</a><a href="/search?q={qp}&amp;sc=Ecosia">Ecosia</a><a href="/search?q={qp}&amp;sc=Startpage">Startpage</a></div>
</div>
<div class="right-col"><div class="llm-btn" data-kalid="" data-lang="Summarise these results &#187;"><div id="llm-link" class="infobox-right llm-ib"><a href="https://www.mojeek.com/search?q={qp}&amp;mal=1">Summarise these results &#187;</a></div></div></div>
</div>
<div class="feedback-sticky"><a class="js-modal-open" data-modal="feedback" href="/about/contact?q={qe}"><span>Submit feedback</span></a></div>
</div>
<div class="footer-search"><div class="sf2"><form method="get" action="/search" name="sf2"><input type="text" class="js-search-input" maxlength="256" name="q" value="{q}" placeholder="Search The Web using Mojeek..."><button class="btn js-search-btn" type="submit"><span class="svg-icon search"></span></button></form></div></div>
<div class="footer-loc"><span class="js-loc-chooser">London, GB - detected automatically<span class="pipe">|</span><a href="/preferences?tab=location-language" class="js-country-sel js-modal-open" data-modal="country-modal" data-cc="GB">Change</a></span></div>
<div class="footer"><ul class="search-pages"><li><a href="/about/">About</a></li><li><a href="/services/search/web-search-api/">API</a></li><li><a href="/support/">Support</a></li><li><a href="https://blog.mojeek.com/">Blog</a></li></ul><ul class="page-links"><li><a class="js-modal-open" data-modal="feedback" href="/about/contact?q={qe}">Feedback</a></li><li><a href="/about/privacy/">Privacy</a></li><li><a href="/about/terms.html">Terms</a></li><li><a href="/preferences">Settings</a></li></ul></div>
<script src="/js/vendor/jquery-3.2.1.min.js?v=1.260"></script><script async="" src="/js/main.js?v=1.260"></script><script async="" src="/js/page_specific/search.js?v=1.260"></script><script async="" src="/js/page_specific/related-queries.js?v=1.260"></script><script async="" src="/js/page_specific/jsad.js?v=1.260"></script>
</body></html>
"""


def _host(url: str) -> str:
    return url.split("/")[2] if url.count("/") >= 2 and "//" in url else ""


def _display(url: str) -> str:
    """The breadcrumb Mojeek prints in `span.url`: the origin, then ` › path › segments`."""
    origin, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    parts = [part for part in path.split("?", 1)[0].split("/") if part]
    crumbs = f"<span> &#8250; {' &#8250; '.join(html.escape(p) for p in parts)}</span>" if parts else ""
    return html.escape(f"{origin}://{host}") + crumbs


def _pagination(query: str, first: int, total: int) -> str:
    qp = quote_plus(query)
    pages = min(5, max(1, (total + PAGE_SIZE - 1) // PAGE_SIZE))
    current = (first - 1) // PAGE_SIZE + 1
    items = ["<li>Prev</li>" if current == 1 else f'<li><a href="/search?q={qp}{_s(current - 1)}">Prev</a></li>']
    for page in range(1, max(pages, current) + 1):
        if page == current:
            items.append(f"<li><span>{page}</span></li>")
        else:
            items.append(f'<li><a href="/search?q={qp}{_s(page)}"><span>{page}</span></a></li>')
    if current * PAGE_SIZE < total:
        items.append(f'<li><a href="/search?q={qp}{_s(current + 1)}">Next</a></li>')
    return '<div class="pagination"><ul>' + "".join(items) + "</ul></div>\n"


def _s(page: int) -> str:
    """The `s` of a page link (page 1 has none)."""
    return "" if page == 1 else f"&amp;s={(page - 1) * PAGE_SIZE + 1}"


def results_page(query: str, results: Sequence[MojeekResult], *, first: int = 1, total: int | None = None) -> str:
    """A results page as www.mojeek.com serves it, its first result ranked `first`. Titles and
    snippets are inserted as HTML (so tests can include `<strong>` and entities)."""
    q, qp = html.escape(query), quote_plus(query)
    blocks = []
    seen_hosts: set[str] = set()
    for n, r in enumerate(results, first):
        href, host = html.escape(r.url), _host(r.url)
        link = f'<a class="title" title="{href}" href="{href}">{r.title}</a>'
        blocks.append(
            _RESULT.format(
                n=n,
                clu=" clu-result" if host in seen_hosts else "",
                href=href,
                display=_display(r.url),
                heading=r.title if r.no_title_link else link,
                snippet=f'<p class="s">{r.snippet}</p>\n' if r.snippet else "",
                host=html.escape(quote(host)),
                qp=qp,
            )
        )
        seen_hosts.add(host)
    last = first - 1 + len(results)
    total = max(total if total is not None else last, last)
    page = _HEAD.format(q=q, qp=qp) + _COUNT.format(first=first, last=last, total=f"{total:,}")
    page += '<div class="result-col"><div class="results"><ul class="results-standard">\n<!--ls-->\n'
    page += "".join(blocks) + "<!--le-->\n</ul></div>\n" + _pagination(query, first, total)
    return page + _TAIL.format(q=q, qp=qp, qe=quote(query))


def no_results_page(query: str) -> str:
    """The page served when nothing matches: the ordinary chrome, a `top-info` line, no list."""
    q, qp = html.escape(query), quote_plus(query)
    body = f'<div class="top-info"><p>No pages found matching: <b>{q}</b></p></div>\n<div class="result-col">\n'
    body += "<p>Suggestions:</p><ul><li>Make sure all words are spelled correctly.</li><li>Try different keywords.</li></ul>\n"
    return _HEAD.format(q=q, qp=qp) + body + _TAIL.format(q=q, qp=qp, qe=quote(query))


def blocked_page() -> str:
    """The 403 page Mojeek serves to networks it takes for automated traffic."""
    return """<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><title>403 - Forbidden</title>
<link id="theme" rel="stylesheet" type="text/css" href="/css/style.css?v=2.119"></head>
<body data-theme="light" class="home"><div class="header"><div class="left"><a href="https://www.mojeek.com/"><img src="/logos/logo_cc.svg" alt="Mojeek"></a></div></div>
<div class="content"><h1>403 - Forbidden</h1><p>Sorry your network appears to be sending automated queries to our search engine.</p>
<p>If you think this is in error, please <a href="/about/contact">contact us</a>.</p></div>
<div class="footer inverted"><ul class="page-links"><li><a href="/about/privacy/">Privacy</a></li><li><a href="/about/terms.html">Terms</a></li></ul></div></body></html>"""


def captcha_page(query: str = "") -> str:
    """The CAPTCHA page (an ALTCHA proof-of-work widget) Mojeek serves to some networks, with 200."""
    qp = quote(query)
    return f"""<html lang="en"><head><meta charset="UTF-8"><meta name="referrer" content="origin"><meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Captcha</title><link id="theme" rel="stylesheet" type="text/css" href="/css/style.css?v=2.119"><link rel="canonical" href="https://www.mojeek.com/search"></head><body data-theme="light" class="home">
<div class="header"><div class="left"><a href="https://www.mojeek.com/"><img src="/logos/logo_cc.svg" alt="Mojeek"></a></div></div>
<div class="captcha-wrap"><p>JavaScript is required to complete this challenge. Please enable it and reload the page.</p></div><script type="module" src="/js/page_specific/altcha.js"></script>
<div class="footer inverted"><ul class="page-links"><li><a href="/about/contact?q={qp}">Feedback</a></li><li><a href="/preferences">Settings</a></li></ul></div>
<script async src="/js/page_specific/challenge.js?v=1.264"></script></body></html>"""


def sample_results(query: str, n: int = 30) -> list[MojeekResult]:
    """`n` plausible results for `query`, with `<strong>` terms and entities like the real snippets."""
    words = html.escape(query)
    slug = quote(query.replace(" ", "-"))
    return [
        MojeekResult(
            title=f"{words} &#8211; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{slug}/part-{i}?ref=mj&lang=en",
            snippet=(
                f"Learn about <strong>{words}</strong> in part {i}: installation, configuration &amp; troubleshooting. "
                f"This page explains how <strong>{words}</strong> works under load, with benchmarks, examples and "
                f"a FAQ covering the most common questions asked in {2020 + i % 6}."
            ),
        )
        for i in range(1, n + 1)
    ]


class FakeMojeek(FakeServer):
    """Answers GET /search with page `s` of the results for the query (30 by default)."""

    provider_id = "mojeek"

    def __init__(self, results: Sequence[MojeekResult] | None = None) -> None:
        super().__init__()
        self.results = results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "GET" or request.path != "/search":
            return NOT_FOUND
        args = request.args
        s = args.get("s")
        if any(value == "" for _, value in request.query) or s in ("0", "1") or (s is not None and not s.isdigit()):
            return Reply(403, blocked_page(), content_type="text/html; charset=UTF-8")
        query = args.get("q", "")
        results = engine_results(query, self.results, sample_results)
        first = int(s) if s else 1
        chosen = results[first - 1 : first - 1 + PAGE_SIZE]
        if not chosen:
            return Reply(200, no_results_page(query), content_type="text/html; charset=UTF-8")
        page = results_page(query, chosen, first=first, total=len(results))
        return Reply(200, page, content_type="text/html; charset=UTF-8")
