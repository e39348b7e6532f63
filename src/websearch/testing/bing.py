"""A fake www.bing.com: result pages shaped like the real ones, page 2+, the CAPTCHA, no results.

The pages follow what Bing serves a desktop browser without JavaScript (see the provider's
docstring for the sources): a header with the search form and scope bar, `#b_tween` with the
result count, `ol#b_results` holding a top ad block (`li.b_ad`, links through `/aclick`), the
organic `li.b_algo` blocks (a `b_tpcn` site link, the `h2 a` title, `.b_caption p` snippet,
sometimes a `span.news_dt` date), a related-searches answer and the pager (`li.b_pag`, the
current page marked `a.sb_pagS`), then the `#b_context` side column and a footer, with the inline
script and style a real page carries.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, quote_plus

from ._html import NOT_FOUND, engine_results, html_reply
from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "BingResult",
    "FakeBing",
    "captcha_page",
    "challenge_page",
    "ck_href",
    "no_results_page",
    "results_page",
    "sample_results",
]

#: Results on one page of the fake (Bing's default page holds about ten).
PAGE_SIZE = 10
#: Where Bing sends a client it wants to challenge (the CAPTCHA frame's own page).
CAPTCHA_PATH = "/turing/captcha/challenge"

Link = Literal["ck", "direct", "relative"]


@dataclass(frozen=True, slots=True)
class BingResult:
    """One block of the page. `title`, `snippet` and `date` are inserted as HTML (tests may use
    `<strong>` and entities). `link`: "ck" wraps the URL in Bing's `/ck/a?...&u=a1<base64url>`
    redirect (what real pages do), "direct" writes it as is, "relative" writes it as a path on
    bing.com (`/images/search?...`: Bing's own verticals). `ad` makes it a top ad (`li.b_ad`)."""

    title: str
    url: str
    snippet: str = ""
    date: str | None = None
    ad: bool = False
    link: Link = "ck"


def ck_href(url: str, token: str = "3f1c9a7be2d04c55") -> str:
    """Bing's click-tracking redirect for `url`, as a page's (HTML-escaped) href writes it."""
    encoded = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&amp;&amp;p={token}JmltdHM9MTc2NDQ2MDgwMA&amp;u=a1{encoded}&amp;ntb=1"


def _href(result: BingResult) -> str:
    if result.ad:
        target = base64.urlsafe_b64encode(result.url.encode()).decode().rstrip("=")
        return f"https://www.bing.com/aclick?ld=e8Kq1vM2xN0pQ&amp;u={target}&amp;rlid=7a2c&amp;ntb=1"
    if result.link == "direct":
        return html.escape(result.url)
    if result.link == "relative":
        return html.escape("/" + result.url.split("//", 1)[-1].partition("/")[2])
    return ck_href(result.url)


_FILLER_CSS = "".join(
    f".b_s{i}{{margin:{i % 7}px 0 {i % 5}px;padding:0 {i % 3}px;color:#{(i * 2654435761) % 0xFFFFFF:06x}}}"
    for i in range(900)
)
_FILLER_JS = "".join(
    f'_w["sj_{i}"]=function(n,t){{return n&&n.getAttribute?n.getAttribute("data-{i}")||t:t}};' for i in range(300)
)

_HEAD = """<!DOCTYPE html><html dir="ltr" lang="en" xml:lang="en" xmlns="http://www.w3.org/1999/xhtml" xmlns:Web="http://schemas.live.com/Web/"><script type="text/javascript" nonce="Ks1vQ9bq">//<![CDATA[
si_ST=new Date
//]]></script><head><!--pc--><title>{q} - Search</title><meta content="text/html; charset=utf-8" http-equiv="content-type" /><meta name="referrer" content="origin-when-cross-origin" /><meta property="og:description" content="Intelligent search from Bing makes it easier to quickly find what you&#39;re looking for and rewards you." /><meta property="og:site_name" content="Bing" /><meta property="og:title" content="{q} - Bing" /><meta property="og:url" content="https://www.bing.com/search?q={qp}" /><link rel="icon" href="/sa/simg/favicon-trans-bg-blue-mg.ico" /><script type="text/javascript" nonce="Ks1vQ9bq">//<![CDATA[
_G={{Region:"US",Lang:"en-US",ST:(typeof si_ST!=='undefined'?si_ST:new Date),Mkt:"en-US",RevIpCC:"us",RTL:false,Ver:"21",IG:"8B1E7C2A94D64F0B9E5C3A1D7F2B6E40",EventID:"6a1f0c3e9b2d4e7f",V:"web",P:"SERP",DA:"BL2",CID:"2F6A1B9C8D7E4F30",SUIH:"qN3vX8mZ1pL5tR7wY2cB4g",adc:"b_ad",gpUrl:"\\/fd\\/ls\\/GLinkPing.aspx?"}};_G.lsUrl="/fd/ls/l?IG="+_G.IG;curUrl="https:\\/\\/www.bing.com\\/search";var _w=window;{js}
//]]></script><style type="text/css">#b_header{{padding:22px 0 0}}#b_results>li{{padding:10px 20px}}.b_algo h2 a{{color:#1a0dab}}.b_caption p{{line-height:22px}}.b_ad{{background:#fff}}{css}</style></head>
<body class="b_respl"><header id="b_header" role="banner"><form action="/search" id="sb_form" class=" hassbi"><a class="b_logoArea" target="" href="/?FORM=Z9FD1" h="ID=SERP,5009.1"><h1 class="b_logo" title="Back to Bing search"></h1></a><div class="b_searchboxForm" role="search"><input type="search" name="q" id="sb_form_q" class="b_searchbox b_softkey" maxlength="2048" value="{q}" autocapitalize="off" autocorrect="off" autocomplete="off" spellcheck="false" /><label for="sb_form_go" class="search icon tooltip" aria-label="Search the web"><input type="submit" class="b_searchboxSubmit" id="sb_form_go" tabindex="0" name="search" value="" /></label><input id="sa_qs" name="qs" value="ds" type="hidden" /><input type="hidden" value="QBRE" name="form" /></div></form><nav class="b_scopebar" role="navigation" aria-label="Search Filter"><ul><li class=" b_active" id="b-scopeListItem-web"><a class="b_active" href="/?scope=web&amp;FORM=HDRSC1" h="ID=SERP,5016.1" aria-current="page">All</a></li><li id="b-scopeListItem-images"><a href="/images/search?q={qp}&amp;FORM=HDRSC2" h="ID=SERP,5017.1">Images</a></li><li id="b-scopeListItem-video"><a href="/videos/search?q={qp}&amp;FORM=HDRSC3" h="ID=SERP,5018.1">Videos</a></li><li id="b-scopeListItem-news"><a href="/news/search?q={qp}&amp;FORM=HDRSC6" h="ID=SERP,5019.1">News</a></li><li id="b-scopeListItem-local"><a href="/maps?q={qp}&amp;FORM=HDRSC4" h="ID=SERP,5020.1">Maps</a></li></ul></nav></header>
<main aria-label="Search Results"><div id="b_content"><div id="b_pole"></div><div id="b_tween"><span class="sb_count">{count}</span><div id="b_tween_searchTools"><a class="ftrH" href="#" aria-haspopup="true" h="ID=SERP,5031.1">Tools</a></div></div>
<ol id="b_results" class="">"""

_AD = """<li class="b_ad b_adTop" data-bm="5"><ul><li class=" b_adLastChild"><div class="sb_add sb_adTA"><h2 class=""><a class="" target="_blank" href="{href}" h="ID=SERP,5120.1">{title}</a></h2><div class="b_caption"><div class="b_attribution"><cite>{display}</cite><span class="b_adSlug b_opttxt b_divdef">Ad</span></div><p class="b_lineclamp2">{snippet}</p></div></div></li></ul></li>"""

_RESULT = """<li class="b_algo" data-id iid="SERP.{iid}" data-bm="{bm}"><div class="b_tpcn"><a class="tilk" aria-label="{site}" href="{href}" h="ID=SERP,{iid}.1"><div class="tpic"><div class="wr_fav" data-priority="2"><div class="cico siteicon" style="width:16px;height:16px;"><div class="rms_iac" style="height:16px;line-height:16px;width:16px;" data-height="16" data-width="16" data-alt="Global web icon" data-class="rms_img" data-src="https://th.bing.com/th?id=ODLS.{iid}&amp;w=32&amp;h=32&amp;qlt=90&amp;pcl=fffffa&amp;o=6&amp;pid=1.2"></div></div></div></div><div class="tptxt"><div class="tptt">{site}</div><div class="tpmeta"><div class="b_attribution" tabindex="0"><cite>{display}</cite><div class="algoSlug_icon" data-priority="2"></div></div></div></div></a></div><h2 class=""><a target="_blank" href="{href}" h="ID=SERP,{iid}.2">{title}</a></h2><div class="b_caption"><p class="b_lineclamp2">{date}{slug}{snippet}</p></div></li>"""

_RELATED = """<li class="b_ans"><div class="b_rs"><h2 class="b_rsTitle">Related searches for {q}</h2><div class="b_rrsr"><ul class="b_vList b_divsec"><li><a href="/search?q={qp}+tutorial&amp;FORM=QSRE1" h="ID=SERP,5400.1"><div class="b_suggestionIcon"></div><div class="b_suggestionText">{q} <strong>tutorial</strong></div></a></li><li><a href="/search?q={qp}+examples&amp;FORM=QSRE2" h="ID=SERP,5401.1"><div class="b_suggestionIcon"></div><div class="b_suggestionText">{q} <strong>examples</strong></div></a></li></ul></div></div></li>"""

_TAIL = """</ol><ol id="b_context"><li class="b_ans"><div class="b_entityTP"><h2 class="b_entityTitle">{q}</h2><a href="https://en.wikipedia.org/wiki/Special:Search?search={qp}" h="ID=SERP,5500.1">Wikipedia</a></div></li></ol></div></main><footer id="b_footer" class="b_footer" role="contentinfo" aria-label="Footer"><div id="b_footerItems"><span>&copy; 2026 Microsoft</span><ul><li><a id="sb_privacy" href="http://go.microsoft.com/fwlink/?LinkId=521839" h="ID=SERP,5068.1">Privacy and Cookies</a></li><li><a id="sb_legal" href="http://go.microsoft.com/fwlink/?LinkID=246338" h="ID=SERP,5069.1">Legal</a></li><li><a id="sb_help" href="https://support.microsoft.com/topic/82d20721-2d6f-4012-a13d-d1910ccf203f" h="ID=SERP,5072.1">Help</a></li></ul></div></footer><script type="text/javascript" nonce="Ks1vQ9bq">//<![CDATA[
_w.rms&&_w.rms.js({{"A:rms:answers:Shared:BingCore.Bundle":"/rp/0rX2pUfPk3ZpXtGpcJmVYo1bT9I.br.js"}});
//]]></script></body></html>"""


def _pager(query: str, page: int) -> str:
    qp = quote_plus(query)
    items = []
    for n in range(1, 6):
        if n == page:
            items.append(f'<li><a class="sb_pagS sb_pagS_bp b_widePag sb_bp" aria-label="Page {n}">{n}</a></li>')
        else:
            where = f"&amp;first={(n - 1) * PAGE_SIZE + 1}&amp;FORM=PERE{n - 2 if n > 2 else ''}" if n > 1 else ""
            items.append(
                f'<li><a class="b_widePag sb_bp" aria-label="Page {n}" href="/search?q={qp}{where}"'
                f' h="ID=SERP,{5424 + n}.1">{n}</a></li>'
            )
    nxt = page * PAGE_SIZE + 1
    items.append(
        f'<li><a class="sb_pagN sb_pagN_bp b_widePag sb_bp " title="Next page" href="/search?q={qp}&amp;first={nxt}'
        f'&amp;FORM=PORE" h="ID=SERP,5431.1"><div class="sw_next">Next</div></a></li>'
    )
    label = html.escape(query)
    return (
        f'<li class="b_pag"><nav role="navigation" aria-label="More results for {label}">'
        f'<h4 class="b_hide">Pagination</h4><ul class="sb_pagF">{"".join(items)}</ul></nav></li>'
    )


def _head(query: str, count: str) -> str:
    return _HEAD.format(q=html.escape(query), qp=quote_plus(query), count=count, js=_FILLER_JS, css=_FILLER_CSS)


def results_page(query: str, results: Sequence[BingResult], first: int = 1) -> str:
    """A results page as www.bing.com serves it; `first` is the rank of the page's first result
    (1, 11, 21, ...), shown in the result count and the pager."""
    blocks = []
    for i, r in enumerate(results):
        host = r.url.split("/")[2] if "//" in r.url else r.url
        display = html.escape(r.url.split("?", 1)[0])
        if r.ad:
            blocks.append(_AD.format(href=_href(r), title=r.title, display=html.escape(host), snippet=r.snippet))
            continue
        date = f'<span class="news_dt">{r.date}</span>&ensp;&#0183;&ensp;' if r.date else ""
        slug = '<span class="algoSlug_icon" data-priority="2">WEB</span>' if i % 3 == 2 else ""
        blocks.append(
            _RESULT.format(
                iid=5261 + 17 * i,
                bm=6 + i,
                site=html.escape(host.removeprefix("www.")),
                href=_href(r),
                display=display,
                title=r.title,
                date=date,
                slug=slug,
                snippet=r.snippet,
            )
        )
    page = (first - 1) // PAGE_SIZE + 1
    count = f"{first}-{first + len(results) - 1} of 1,240,000 results" if first > 1 else "About 1,240,000 results"
    q, qp = html.escape(query), quote_plus(query)
    related = _RELATED.format(q=q, qp=qp)
    return _head(query, count) + "".join(blocks) + related + _pager(query, page) + _TAIL.format(q=q, qp=qp)


def no_results_page(query: str) -> str:
    """The page Bing serves when nothing matches: `li.b_no` in an otherwise empty results list."""
    q = html.escape(query)
    body = (
        f'<li class="b_no"><h1>There are no results for <strong>{q}</strong></h1><ul><li>'
        "<span>Check your spelling or try different keywords</span></li></ul></li>"
    )
    return _head(query, "") + body + _TAIL.format(q=q, qp=quote_plus(query))


def captcha_page(query: str = "") -> str:
    """The interstitial served at /search instead of results: "One last step", with the CAPTCHA
    frame (`/turing/captcha/challenge`, Bing's Cloudflare Turnstile wrapper) and no results list."""
    src = CAPTCHA_PATH + ("?q=" + quote(query) if query else "")
    return f"""<!DOCTYPE html><html dir="ltr" lang="en"><head><meta charset="utf-8" /><title>One last step</title>
<meta name="robots" content="noindex, nofollow" /><link rel="icon" href="/sa/simg/favicon-trans-bg-blue-mg.ico" />
<style>#b_captcha{{margin:80px auto;max-width:560px;font-family:Segoe UI,sans-serif}}</style></head>
<body><div id="b_content"><div id="b_captcha" class="b_captcha"><h1>One last step</h1>
<p>Please solve the challenge below to continue</p>
<iframe id="turingCaptchaFrame" title="Challenge" src="{html.escape(src)}" width="400" height="200"></iframe>
<form id="b_captcha_form" action="/turing/captcha/verify" method="post"><input type="hidden" name="rurl" value="/search?q={quote_plus(query)}" /></form>
</div></div></body></html>"""


def challenge_page() -> str:
    """The page at /turing/captcha/challenge itself: the Cloudflare Turnstile widget."""
    return """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" /><title>Challenge</title>
<script src="https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit" async defer></script></head>
<body><div id="turnstile-widget" class="cf-turnstile" data-sitekey="0x4AAAAAAAVrOwQWPlm3Bnr5"></div>
<script>window.onloadTurnstileCallback=function(){turnstile.render("#turnstile-widget",{callback:function(t){document.forms[0].submit()}})}</script>
<form method="post" action="/turing/captcha/verify"><input type="hidden" name="t" value="" /></form></body></html>"""


def sample_results(query: str, n: int = 30) -> list[BingResult]:
    """`n` plausible results for `query`, with bold terms, entities and some dates as Bing writes them."""
    words = html.escape(query)
    months = ("Jan", "Mar", "May", "Jul", "Sep", "Nov")
    return [
        BingResult(
            title=f"{words} &#8212; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{quote(query.replace(' ', '-'))}/part-{i}?ref=bing&lang=en",
            snippet=(
                f"Learn about <strong>{words}</strong> in part {i}: installation, configuration &amp; "
                f"troubleshooting. This page explains how <strong>{words}</strong> works under load, with "
                f"benchmarks, examples and a FAQ covering the most common questions asked in {2020 + i % 6}."
            ),
            date=f"{months[i % 6]} {1 + i % 27}, {2020 + i % 6}" if i % 4 == 1 else None,
        )
        for i in range(1, n + 1)
    ]


def _ad_for(query: str) -> BingResult:
    return BingResult(
        f"{html.escape(query)} - Official Site", "https://shop.example.com/deal", "Buy now &amp; save", ad=True
    )


class FakeBing(FakeServer):
    """Answers GET /search with page `first` (1, 11, 21, ...) of the results for `q`: a top ad,
    then up to `page_size` (ten) organic results. Like Bing, a `first` past the last result gets page 1 again.
    GET /turing/captcha/challenge answers the challenge page (tests redirect to it)."""

    provider_id = "bing"

    def __init__(self, results: Sequence[BingResult] | None = None, page_size: int = PAGE_SIZE) -> None:
        super().__init__()
        self.results = results
        self.page_size = page_size  # organic results a page shows (`first` still counts in tens)

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method == "GET" and request.path == CAPTCHA_PATH:
            return html_reply(challenge_page())
        if request.method != "GET" or request.path != "/search":
            return NOT_FOUND
        query = request.args.get("q", "")
        results = engine_results(query, self.results, lambda q: [_ad_for(q), *sample_results(q)])
        ads = [r for r in results if r.ad]
        organic = [r for r in results if not r.ad]
        first = request.args.get("first", "1")
        number = (int(first) - 1) // PAGE_SIZE if first.isdigit() and int(first) > 0 else 0
        start = number * self.page_size
        if start >= len(organic):  # Bing answers a page past the end with page 1
            number = start = 0
        shown = organic[start : start + self.page_size]
        page = results_page(query, [*ads, *shown] if start == 0 else shown, number * PAGE_SIZE + 1)
        return html_reply(page)
