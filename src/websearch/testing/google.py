"""A fake www.google.com/search: result pages shaped like the real ones, Google's walls, no results.

Three page variants, as Google serves them: "basic" (the page plain HTTP clients get: `div.Gx5Zad`
blocks, `/url?q=<target>&sa=U...` hrefs, footer "Next" link), "browser" (the page a browser
with JavaScript gets: `div.MjjYud > div.g`, direct hrefs, `div.VwiC3b` snippets, ads in
`#tads`, the "enable JavaScript" `<noscript>` refresh, `a#pnnext`) and "text" (the text-browser
page: `div.ezO2md`, `span.CVA68e` titles, `span.FrIlee` snippets). The walls: the `/sorry/`
CAPTCHA (`challenge_page`, `sorry_redirect`), the JavaScript wall (`javascript_page`) and the
cookie-consent page (`consent_page`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import quote, urlsplit

from ._html import NOT_FOUND, engine_results
from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "FakeGoogle",
    "GoogleResult",
    "Variant",
    "challenge_page",
    "consent_page",
    "javascript_page",
    "no_results_page",
    "results_page",
    "sample_results",
    "sorry_redirect",
]

Variant = Literal["basic", "browser", "text"]
PAGE_SIZE: Final = 10
_HTML: Final = "text/html; charset=UTF-8"
_SEI: Final = "q0qhabPHLImk5NoPkqmY-QE"


@dataclass(frozen=True, slots=True)
class GoogleResult:
    """One result. `title` and `snippet` are inserted as HTML (tests can use `<b>` and entities);
    `href` replaces the variant's own link form; `ad` makes it a sponsored result."""

    title: str
    url: str
    snippet: str = ""
    ad: bool = False
    href: str | None = None


def _ved(i: int) -> str:
    return f"2ahUKEwj{i:02d}w9XnyIiHAxVKSPEDHc8rBs4QFnoECAkQAQ"


def _wrapped(url: str, i: int) -> str:
    """The basic page's redirect link: `/url?q=<target>&sa=U&ved=...&usg=...`."""
    return f"/url?q={quote(url, safe=':/')}&amp;sa=U&amp;ved={_ved(i)}&amp;usg=AOvVaw3nCk{i:02d}xQ9zP1mVbG8e"


def _display(url: str) -> str:
    parts = urlsplit(url)
    path = " › ".join(p for p in parts.path.split("/") if p)
    return html.escape(f"{parts.scheme}://{parts.netloc}" + (f" › {path}" if path else ""))


def _site(url: str) -> str:
    host = urlsplit(url).hostname or url
    return html.escape(host.removeprefix("www.").split(".")[0].capitalize())


# -- the basic page --------------------------------------------------------------------------

_BASIC_HEAD = """<!doctype html><html lang="en-US"><head><meta charset="UTF-8"><meta content="/images/branding/googleg/1x/googleg_standard_color_128dp.png" itemprop="image"><title>{q} - Google Search</title><script nonce="Zk2bVqGQ0h7yRrj4cVd1Ew">(function(){{window.google={{kEI:'{sei}',kEXPI:'0,1303012,56873,6059,206,4804,2316,383,246,5,1129120,1197753,380783,16114,28684,22431,1361,12319,17579,4998,17075,41316,2891,3926,7828,606,30668,30022,16335,20583,4,1528,2304,42127,13658,13795,7428,5821,2536,4094,7596,1,11942,30211,2,39761,5679,1020,31122,4568,6259,23418,1252,5835,14968,4332,8,7476,445,2,2,1,6959,17667,2006,8155,7381,2,15968,872,19634,7,1922,5784,3995,13880,7511,14763,6305,2006,17769,424,15605,2013,2518,14,82,2932,1709,8377,3741,1090,3103'}};google.sn='web';google.kHL='en-US';}})();</script><style>a{{color:#1a0dab;text-decoration:none;-webkit-tap-highlight-color:rgba(0,0,0,.10)}}a:visited{{color:#681da8}}.BNeawe{{white-space:pre-line;word-wrap:break-word}}.vvjwJb{{color:#1a0dab;font-size:20px;line-height:26px}}.UPmit{{font-size:14px;line-height:20px;color:#202124}}.s3v9rd{{font-size:14px;line-height:20px;color:#4d5156}}.Gx5Zad{{margin-bottom:10px;box-shadow:0 0 0 1px #dadce0;border-radius:8px}}.kCrYT{{padding:12px 16px 12px}}.zBAuLc{{font-weight:normal;margin:0;padding:0}}.r0bn4c{{color:#70757a}}.nBDE1b{{display:inline-block;padding:0 12px}}footer{{text-align:center}}</style></head><body jsmodel="hspDDf"><header><div class="mCljob"><div><a href="/?sa=X&amp;ved=0ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4QOwgC"><span class="V6gwVd">G</span><span class="iWkuvd">o</span><span class="cDrQ7">o</span><span class="V6gwVd">g</span><span class="ntlR9">l</span><span class="iWkuvd tJ3Myc">e</span></a></div></div><div class="sbc esbc"><form class="Pg70bf Uv67qb" id="sf" action="/search" method="GET"><input name="q" value="{q}" autocapitalize="none" autocomplete="off" class="noHIxc" spellcheck="false" type="text"><input name="ie" value="UTF-8" type="hidden"><input name="hl" value="en" type="hidden"><button id="qdClwb" type="submit"></button></form></div></header><div class="Pg70bf" id="main"><div class="KP7LCb"><div class="bRsWnc"><div class="N6RWV"><div class="Pg70bf Ljj8r"><div class="OXXup">All</div><a class="nBDE1b" href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;tbm=isch&amp;source=lnms&amp;sa=X&amp;ved=0ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q_AUIBSgB">Images</a><a class="nBDE1b" href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;tbm=vid&amp;source=lnms&amp;sa=X&amp;ved=0ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q_AUIBigC">Videos</a><a class="nBDE1b" href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;tbm=nws&amp;source=lnms&amp;sa=X&amp;ved=0ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q_AUIBygD">News</a><a class="nBDE1b" href="https://maps.google.com/maps?q={qq}&amp;hl=en&amp;gl=us&amp;um=1&amp;ie=UTF-8&amp;sa=X&amp;ved=0ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q_AUICCgE">Maps</a></div></div></div></div><div id="cnt"><div></div>
"""

_BASIC_RESULT = """<div><div class="Gx5Zad fP1Qef xpd EtOod pkphOe"><div class="egMi0 kCrYT"><a href="{href}" data-ved="{ved}"><div class="DnJfK"><div class="j039Wc"><h3 class="zBAuLc l97dzf"><div class="BNeawe vvjwJb AP7Wnd">{title}</div></h3></div><div class="sCuL3"><div class="BNeawe UPmit AP7Wnd lRVwie">{display}</div></div></div></a></div><div class="kCrYT"><div><div class="BNeawe s3v9rd AP7Wnd"><div><div><div class="BNeawe s3v9rd AP7Wnd">{snippet}</div></div></div></div></div></div></div></div>
"""

_BASIC_AD = """<div><div class="Gx5Zad xpd EtOod pkphOe"><div class="kCrYT"><a href="{href}"><div class="DnJfK"><div class="j039Wc"><h3 class="zBAuLc l97dzf"><div class="BNeawe vvjwJb AP7Wnd">{title}</div></h3></div><div class="sCuL3"><span class="dloBPe">Sponsored</span><div class="BNeawe UPmit AP7Wnd lRVwie">{display}</div></div></div></a></div><div class="kCrYT"><div><div class="BNeawe s3v9rd AP7Wnd">{snippet}</div></div></div></div></div>
"""

_BASIC_IMAGES = """<div><div class="Gx5Zad xpd EtOod pkphOe"><div class="egMi0 kCrYT"><a href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;tbm=isch&amp;sa=X&amp;ved=2ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q7Al6BAgFEAE"><h3 class="zBAuLc l97dzf"><div class="BNeawe vvjwJb AP7Wnd">Images for {q}</div></h3></a></div><div class="kCrYT"><div class="idg8be"><a href="/imgres?imgurl=https://images.example.net/1.png&amp;imgrefurl=https://images.example.net/&amp;h=512&amp;w=512&amp;sa=X"><img class="iJ1Kvb" alt="" src="data:image/gif;base64,R0lGODlhAQABAIAAAP///////yH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==" style="max-width:122px;max-height:122px"></a><a href="/imgres?imgurl=https://images.example.net/2.png&amp;imgrefurl=https://images.example.net/2&amp;h=512&amp;w=512&amp;sa=X"><img class="iJ1Kvb" alt="" src="data:image/gif;base64,R0lGODlhAQABAIAAAP///////yH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==" style="max-width:122px;max-height:122px"></a></div></div></div></div>
"""

_BASIC_PLACES = """<div><div class="Gx5Zad xpd EtOod pkphOe"><div class="egMi0 kCrYT"><a href="/url?q=https://maps.google.com/maps%3Fq%3D{qq}%26um%3D1%26ie%3DUTF-8&amp;sa=U&amp;ved=2ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4QtgN6BAgBEAI&amp;usg=AOvVaw0aK8y"><h3 class="zBAuLc l97dzf"><div class="BNeawe vvjwJb AP7Wnd">Places</div></h3></a></div><div class="kCrYT"><div class="BNeawe s3v9rd AP7Wnd">Map results for {q}</div></div></div></div>
"""

_BASIC_TAIL = """<div><div class="Gx5Zad xpd EtOod pkphOe"><div class="kCrYT"><span><div class="BNeawe">Related searches</div></span></div><div class="x54gtf"></div><div class="rVLSBd"><a class="tHmfQe" href="/search?hl=en&amp;gl=us&amp;q={qq}+tutorial&amp;sa=X&amp;ved=2ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q1QJ6BAgDEAE"><div class="BNeawe deIvCb AP7Wnd">{q} tutorial</div></a><a class="tHmfQe" href="/search?hl=en&amp;gl=us&amp;q={qq}+examples&amp;sa=X&amp;ved=2ahUKEwiV7P2nyIiHAxVKSPEDHc8rBs4Q1QJ6BAgDEAI"><div class="BNeawe deIvCb AP7Wnd">{q} examples</div></a></div></div></div>
</div></div><footer><div>{paging}</div><div class="S4D3Bb"><span class="EYqSq unknown_loc"></span><span>United States</span></div><div><a class="rEM8G" href="https://accounts.google.com/ServiceLogin?continue=https://www.google.com/search%3Fq%3D{qq}&amp;hl=en">Sign in</a></div><div><a class="rEM8G" href="/setprefs?hl=en&amp;prev=https://www.google.com/search?q%3D{qq}&amp;sig=0_xKk">Settings</a><a class="rEM8G" href="https://policies.google.com/privacy?hl=en">Privacy</a><a class="rEM8G" href="https://policies.google.com/terms?hl=en">Terms</a></div></footer><script nonce="Zk2bVqGQ0h7yRrj4cVd1Ew">(function(){{var e=document.getElementById('qdClwb');e&&e.addEventListener('click',function(){{document.getElementById('sf').submit()}});}})();</script></body></html>"""


def _basic_paging(qq: str, start: int, more: bool) -> str:
    links = []
    if start:
        links.append(
            f'<a class="nBDE1b G5eFlf" href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;start={start - PAGE_SIZE}'
            '&amp;sa=N" aria-label="Previous page">&lt;&nbsp;Prev</a>'
        )
    if more:
        links.append(
            f'<a class="nBDE1b G5eFlf" href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;start={start + PAGE_SIZE}'
            '&amp;sa=N" aria-label="Next page">Next&nbsp;&gt;</a>'
        )
    return '<div class="nMymef MUxGbd lyLwlc">' + "".join(links) + "</div>"


def _basic_href(r: GoogleResult, i: int) -> str:
    if r.href is not None:
        return r.href
    if r.ad:
        return (
            f"/aclk?sa=l&amp;ai=DChcSEwjT3rD2yIiHAxWFR0cBHbP5DkUYABAAGgJxdQ&amp;ae=2&amp;sig=AOD64_3Xy{i:02d}"
            f"&amp;adurl={quote(r.url, safe='')}&amp;ved={_ved(i)}"
        )
    return _wrapped(r.url, i)


def _basic(query: str, results: Sequence[GoogleResult], start: int, more: bool, extras: bool) -> str:
    q, qq = html.escape(query), quote(query)
    blocks = []
    for i, r in enumerate(results):
        template = _BASIC_AD if r.ad else _BASIC_RESULT
        fields = {"href": _basic_href(r, i), "ved": _ved(i), "title": r.title, "snippet": r.snippet}
        blocks.append(template.format(display=_display(r.url), **fields))
        if extras and i == 2:
            blocks.append(_BASIC_IMAGES.format(q=q, qq=qq))
        if extras and i == 5:
            blocks.append(_BASIC_PLACES.format(q=q, qq=qq))
    head = _BASIC_HEAD.format(q=q, qq=qq, sei=_SEI)
    return head + "".join(blocks) + _BASIC_TAIL.format(q=q, qq=qq, paging=_basic_paging(qq, start, more))


# -- the browser page ------------------------------------------------------------------------

_NOSCRIPT = (
    '<noscript><style>table,div,span,p{display:none}</style><meta content="0;url=/httpservice/retry/enablejs?sei='
    + _SEI
    + '" http-equiv="refresh"><div style="display:block">Please click <a href="/httpservice/retry/enablejs?sei='
    + _SEI
    + '">here</a> if you are not redirected within a few seconds.</div></noscript>'
)

_BROWSER_HEAD = (
    """<!doctype html><html itemscope="" itemtype="http://schema.org/SearchResultsPage" lang="en"><head><meta charset="UTF-8"><meta content="origin" name="referrer"><meta content="/images/branding/googleg/1x/googleg_standard_color_128dp.png" itemprop="image"><title>{q} - Google Search</title><script nonce="pQ4WnM8rT2Lx0sYe7HkB6A">(function(){{var _g={{kEI:'{sei}',kEXPI:'31',kBL:'TXJ+',kOPI:89978449}};(function(){{var a;((a=window.google)==null?0:a.stvsc)?google.kEI=_g.kEI:window.google=_g;}}).call(this);}})();(function(){{google.sn='web';google.kHL='en';}})();</script><style>.LC20lb{{display:inline-block;line-height:1.57;margin-bottom:0;padding-top:5px}}.VwiC3b{{line-height:1.58;overflow-wrap:break-word}}.yuRUbf a{{text-decoration:none}}.MjjYud{{margin:0 0 30px}}#tads .uEierd{{margin-bottom:24px}}.VuuXrf{{color:#202124;font-size:14px}}cite.qLRx3b{{color:#4d5156;font-size:12px;font-style:normal}}</style></head><body jsmodel="hspDDf" class="srp" marginheight="3" topmargin="3" id="gsr"><div class="L3eUgb" data-hveid="1">"""
    + _NOSCRIPT.replace("{", "{{").replace("}", "}}")
    + """<div class="o3j99 n1xJcf Ne6nSd"><a class="F8UR8e" href="https://www.google.com/webhp?hl=en&amp;sa=X&amp;ved=0ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQPAgI" title="Go to Google Home"></a></div><div id="searchform" class="CvDJxb"><form action="/search" id="tsf" method="GET" name="f" role="search"><textarea class="gLFyf" aria-label="Search" name="q" rows="1" title="Search">{q}</textarea><input name="sca_esv" value="6f2a1b9c3d4e5f60" type="hidden"><input name="source" value="hp" type="hidden"></form></div><div id="main" class="main"><div id="cnt" class="e9EfHf"><div id="rcnt" class="GyAeWb"><div class="s6JM6d" id="center_col"><div id="taw"><div id="tvcap">{ads}</div></div><div class="eqAnXb" id="res" role="main"><div id="topstuff"></div><div id="search"><div data-hveid="CAEQAA"><h1 class="bNg8Rb OhScic zsYMMe BBwThe" style="clip:rect(1px,1px,1px,1px);height:1px;overflow:hidden;position:absolute;white-space:nowrap;width:1px;z-index:-1000;-webkit-user-select:none">Search Results</h1><div class="dURPMd" id="rso">"""
)

_BROWSER_RESULT = """<div class="MjjYud"><div jscontroller="SC7lYd" class="g Ww4FFb vt6azd tF2Cxc asEBEc" lang="en" style="width:600px" data-hveid="CA{i}QAA" data-ved="2ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQFSgAegQIB{i}AA"><div class="N54PNb BToiNc" data-snc="ih6Jnb_wUPAXb"><div class="kb0PBd A9Y9g jGGQ5e" data-snf="x5WNvb" data-snhf="0"><div class="yuRUbf"><div><span jscontroller="msmzHf" jsaction="rcuQ6b:npT2md;PYDNKe:bLV6Bd;mLt3mc"><a jsname="UWckNb" class="zReHs" href="{href}" data-ved="2ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQFnoECB{i}QAQ" ping="/url?sa=t&amp;source=web&amp;rct=j&amp;opi=89978449&amp;url={enc}&amp;ved=2ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQFnoECB{i}QAQ"><br><h3 class="LC20lb MBeuO DKV0Md">{title}</h3><div class="notranslate TbwUpd NJjxre iUh30 ojE3Fb"><span class="H9lube"><div class="eqA2re NjwKYd Vwoesf" aria-hidden="true"><img class="XNo5Ab" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAAM1BMVEX///8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAADxgEwMAAAAEHRSTlMAEBAgMEBQYHCAj5+vv8/f7++5ia8AAAA=" style="height:18px;width:18px" alt="" data-csiid="{i}" data-atf="1"></div></span><div><span class="VuuXrf">{site}</span><div class="byrV5b"><cite class="qLRx3b tjvcx GvPZzd cHaqb" role="text">{display}</cite></div></div></div></a></span><div class="B6fmyf byrV5b Mg1HEd"><div class="TbwUpd iUh30 ojE3Fb"><span class="H9lube"></span></div><div class="csDOgf BCF2pd L48a4c"><div jscontroller="exgaYe" data-bsextraheight="0" data-isdesktop="true" data-ved="2ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQ2esEegQIB{i}QCQ"><div role="button" tabindex="0" aria-label="About this result"><span class="D6lY4c"></span></div></div></div></div></div></div></div><div class="kb0PBd A9Y9g" data-sncf="1" data-snf="nke7rc"><div class="VwiC3b yXK7lf p4wth r025kc hJNv6b Hdw6tb" style="-webkit-line-clamp:2"><span>{snippet}</span></div></div>{sitelinks}</div></div></div>
"""

_BROWSER_SITELINKS = """<div class="kb0PBd A9Y9g" data-snf="GuLy6c"><table class="jmjoTe" role="presentation"><tr><td class="cIkxbf"><div class="usJj9c"><h3 class="r"><a class="l" href="{url}install/">Install</a></h3><div class="zz3gNc">How to install and set it up.</div></div></td><td class="cIkxbf"><div class="usJj9c"><h3 class="r"><a class="l" href="{url}faq/">FAQ</a></h3><div class="zz3gNc">Answers to the most common questions.</div></div></td></tr></table></div>"""

_BROWSER_AD = """<div data-text-ad="1" class="uEierd"><div class="v5yQqb"><a class="sVXRqc" data-pcu="{url}" data-rw="https://www.google.com/aclk?sa=l&amp;ai=DChcSEwi8mNjEyIiHAxVLTEcBHdT5AqQYABAAGgJxdQ&amp;co=1&amp;sig=AOD64_1d{i:02d}&amp;adurl={enc}" href="{url}"><div class="CCgQ5 vCa9Yd QfkTvb N8QANc Va3FIb EE3Upf" role="heading" aria-level="3"><span>{title}</span></div><div class="x2VHCd OSrXXb ob9lvb" role="text"><span class="U3A9Ac qV8iec">Sponsored</span>{display}</div></a></div><div class="p4wth">{snippet}</div></div>"""

_BROWSER_TAIL = """</div></div></div></div><div id="botstuff"><div data-hveid="CAUQAA"><div class="WQE2Md" role="navigation"><h1 class="Uo8X3b OhScic zsYMMe">Page navigation</h1><table class="AaVjTc" style="border-collapse:collapse;text-align:left" role="presentation"><tr jsname="TeSSVd" valign="top">{paging}</tr></table></div></div></div></div></div></div></div></div><div id="footcnt"><a class="pHiOh" href="https://support.google.com/websearch/?p=ws_results_help&amp;hl=en&amp;fg=1">Help</a><a class="pHiOh" href="https://policies.google.com/privacy?hl=en&amp;fg=1">Privacy</a><a class="pHiOh" href="https://policies.google.com/terms?hl=en&amp;fg=1">Terms</a></div></div><script nonce="pQ4WnM8rT2Lx0sYe7HkB6A">(function(){{google.ldi={{}};google.pim={{}};}})();</script></body></html>"""


def _browser_paging(qq: str, start: int, more: bool) -> str:
    cells = []
    page = start // PAGE_SIZE
    for n in range(max(0, page - 1), page + (2 if more else 1)):
        if n == page:
            cells.append(f'<td class="YyVfkd">{n + 1}</td>')
        else:
            cells.append(
                f'<td><a aria-label="Page {n + 1}" class="fl" href="/search?q={qq}&amp;sca_esv=6f2a1b9c3d4e5f60'
                f'&amp;start={n * PAGE_SIZE}&amp;sa=N&amp;ved=2ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQ8tMDegQIBxAE">{n + 1}</a></td>'
            )
    if more:
        cells.append(
            f'<td class="d6cvqb BBwThe" aria-level="3" role="heading"><a href="/search?q={qq}&amp;sca_esv=6f2a1b9c3d4e5f60'
            f'&amp;start={start + PAGE_SIZE}&amp;sa=N&amp;ved=2ahUKEwjN4p7EyIiHAxUUQ_EDHdm4BUkQ8NMDegQIBxAW" id="pnnext">'
            '<span class="oeN89d" style="display:block;margin-left:53px">Next</span></a></td>'
        )
    return "".join(cells)


def _browser(query: str, results: Sequence[GoogleResult], start: int, more: bool, extras: bool) -> str:
    q, qq = html.escape(query), quote(query)
    ads: list[str] = []
    blocks: list[str] = []
    for i, r in enumerate(results):
        enc = quote(r.url, safe="")
        if r.ad:
            fields = {"url": html.escape(r.href or r.url), "title": r.title, "snippet": r.snippet}
            ads.append(_BROWSER_AD.format(i=i, enc=enc, display=_display(r.url), **fields))
            continue
        origin = "{0.scheme}://{0.netloc}/".format(urlsplit(r.url))
        sitelinks = _BROWSER_SITELINKS.format(url=html.escape(origin)) if extras and not blocks else ""
        blocks.append(
            _BROWSER_RESULT.format(
                i=i,
                href=r.href if r.href is not None else html.escape(r.url),
                enc=enc,
                title=r.title,
                snippet=r.snippet,
                site=_site(r.url),
                display=_display(r.url),
                sitelinks=sitelinks,
            )
        )
    ad_block = '<div id="tads" aria-label="Ads" role="region">' + "".join(ads) + "</div>" if ads else ""
    head = _BROWSER_HEAD.format(q=q, sei=_SEI, ads=ad_block)
    return head + "".join(blocks) + _BROWSER_TAIL.format(paging=_browser_paging(qq, start, more))


# -- the text-browser page -------------------------------------------------------------------

_TEXT_HEAD = """<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>{q} - Google Search</title><style>.ezO2md{{padding:8px 0}}.CVA68e{{color:#1a0dab;font-size:16px}}.dXDvrc{{color:#006621}}.FrIlee{{color:#4d5156}}</style></head><body><table class="bookcf"><tr><td><a href="/?sa=X&amp;ved=0ahUKEwiy"><span class="yJa4Sb">Google</span></a></td><td><form action="/search" method="get"><input name="q" value="{q}" type="text"></form></td></tr></table><div id="main"><div>
"""

_TEXT_RESULT = """<div class="ezO2md"><div><div><a class="fuLhoc ZWRArf" href="{href}"><span class="CVA68e qXLe6d fuLhoc ZWRArf">{title}</span> <span class="qXLe6d dXDvrc"><span class="fYyStc">{display}</span></span></a></div><div class="Dks9wf"><div class="YgS6de"><span class="qXLe6d FrIlee"><span class="fYyStc">{snippet}</span></span></div></div></div></div>
"""

_TEXT_TAIL = """</div><table class="uZgmoc"><tr><td>{paging}</td></tr></table></div></body></html>"""


def _text(query: str, results: Sequence[GoogleResult], start: int, more: bool) -> str:
    q, qq = html.escape(query), quote(query)
    blocks = [
        _TEXT_RESULT.format(
            href=_basic_href(r, i), title=r.title, snippet=r.snippet, display=_display(r.url).replace(" › ", "/")
        )
        for i, r in enumerate(results)
    ]
    paging = (
        f'<a class="frGj1b" href="/search?q={qq}&amp;hl=en&amp;gl=us&amp;start={start + PAGE_SIZE}&amp;sa=N">Next &gt;</a>'
        if more
        else ""
    )
    return _TEXT_HEAD.format(q=q) + "".join(blocks) + _TEXT_TAIL.format(paging=paging)


# -- the public builders ---------------------------------------------------------------------


def results_page(
    query: str,
    results: Sequence[GoogleResult],
    *,
    variant: Variant = "basic",
    start: int = 0,
    more: bool = True,
    extras: bool = True,
) -> str:
    """A result page at offset `start`, as Google serves it in `variant`. `more` adds the link
    to the next page; `extras` the blocks that are no results (an images pack, a maps pack and
    related searches on the basic page, sitelinks under the first result on the browser page)."""
    if variant == "browser":
        return _browser(query, results, start, more, extras)
    if variant == "text":
        return _text(query, results, start, more)
    return _basic(query, results, start, more, extras)


def no_results_page(query: str, variant: Variant = "basic") -> str:
    """The page served when nothing matches."""
    q = html.escape(query)
    if variant == "browser":
        head = _BROWSER_HEAD.format(q=q, sei=_SEI, ads="").replace(
            '<div id="topstuff"></div>',
            f'<div id="topstuff"><div class="card-section"><p role="heading" aria-level="3">Your search - <em>{q}</em>'
            " - did not match any documents.</p><p>Suggestions:</p><ul><li>Make sure that all words are spelled "
            "correctly.</li><li>Try different keywords.</li></ul></div></div>",
        )
        return head + _BROWSER_TAIL.format(paging="")
    notice = (
        '<div><div class="Gx5Zad xpd EtOod pkphOe"><div class="kCrYT"><span class="r0bn4c rQMQod">Your search - '
        f"<b>{q}</b> - did not match any documents.</span></div></div></div>\n"
    )
    qq = quote(query)
    return _BASIC_HEAD.format(q=q, qq=qq, sei=_SEI) + notice + _BASIC_TAIL.format(q=q, qq=qq, paging="")


def challenge_page(query: str = "") -> str:
    """Google's unusual-traffic CAPTCHA, as /sorry/index serves it (with status 429)."""
    target = html.escape(f"https://www.google.com/search?q={quote(query)}")
    return f"""<html>
<head><meta http-equiv="content-type" content="text/html; charset=utf-8"><meta name="viewport" content="initial-scale=1"><title>{target}</title></head>
<body style="font-family: arial, sans-serif; background-color: #fff; color: #000; padding:20px; font-size:18px; overscroll-behavior:contain;" onload="e=document.getElementById('captcha');if(e){{e.focus();}} if(solveSimpleChallenge) {{solveSimpleChallenge(0,0);}}">
<div style="max-width:400px;">
<hr noshade size="1" style="color:#ccc; background-color:#ccc;"><br>
<form id="captcha-form" action="index" method="post">
<noscript>
<div style="font-size:13px;">
  In order to continue, please enable javascript on your web browser.
</div>
</noscript>
<script src="https://www.google.com/recaptcha/api.js" async defer></script>
<script>var submitCallback = function(response) {{document.getElementById('captcha-form').submit();}};</script>
<div id="recaptcha" class="g-recaptcha" data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b" data-callback="submitCallback" data-s="Wm9vZ2xlU29ycnlQYWdlRml4dHVyZQ"></div>
<input type='hidden' name='q' value='EgRkAAABGN2p7bQGIjC1pX3x'><input type="hidden" name="continue" value="{target}">
</form>
<hr noshade size="1" style="color:#ccc; background-color:#ccc;">

<div style="font-size:13px;">
<b>About this page</b><br><br>

Our systems have detected unusual traffic from your computer network.  This page checks to see if it&#39;s really you sending the requests, and not a robot.  <a href="#" onclick="document.getElementById('infoDiv').style.display='block';">Why did this happen?</a><br><br>

<div id="infoDiv" style="display:none; background-color:#eee; padding:10px; margin:0 0 15px 0; line-height:1.4em;">
This page appears when Google automatically detects requests coming from your computer network which appear to be in violation of the <a href="//www.google.com/policies/terms/">Terms of Service</a>. The block will expire shortly after those requests stop.  In the meantime, solving the above CAPTCHA will let you continue to use our services.<br><br>This traffic may have been sent by malicious software, a browser plug-in, or a script that sends automated requests.  If you share your network connection, ask your administrator for help &mdash; a different computer using the same IP address may be responsible.  <a href="//support.google.com/websearch/answer/86640">Learn more</a><br><br>Sometimes you may be asked to solve the CAPTCHA if you are using advanced terms that robots are known to use, or sending requests very quickly.
</div>

IP address: 203.0.113.7<br>Time: 2026-11-30T12:00:00Z<br>URL: {target}<br>
</div>
</div>
</body>
</html>"""


def sorry_redirect(query: str = "") -> Reply:
    """The 302 to the CAPTCHA that Google answers a flagged search with (to this fake's own
    `/sorry/index`, where Google names https://www.google.com/sorry/index)."""
    target = quote(f"https://www.google.com/search?q={quote(query)}", safe="")
    return Reply(302, "", headers={"Location": f"/sorry/index?continue={target}&q=EgRkAAABGN2p7bQGIjC1pX3x"})


def javascript_page(query: str = "", form: Literal["refresh", "iframe"] = "refresh") -> str:
    """The JavaScript wall: the shell Google serves most HTTP clients without JavaScript today, no
    results. `form` is its `<noscript>`: "refresh", a refresh to /httpservice/retry/enablejs
    with a "click here" link, and the `#yvlrue` "having trouble" box after the script; or
    "iframe", the other shape it comes in, an invisible `<iframe>` loading that URL and nothing
    else to tell it by (no refresh, no box)."""
    qq = quote(query)
    if form == "iframe":
        noscript = (
            f'<noscript><iframe src="https://www.google.com/httpservice/retry/enablejs?sei={_SEI}" width="0" '
            'height="0" style="display:none;visibility:hidden"></iframe></noscript>'
        )
        trouble = ""
    else:
        noscript = _NOSCRIPT
        trouble = (
            '<div id="yvlrue" style="display:none">If you\'re having trouble accessing Google Search, please '
            f'<a href="/search?q={qq}&amp;sca_esv=b6b8eb79eb28b6ec&amp;emsg=SG_REL&amp;sei={_SEI}">click here</a>, '
            'or send <a href="https://support.google.com/websearch">feedback</a>.</div>'
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><title>Google Search</title><style>body{background-color:#fff}</style>'
        '<script nonce="Jd9cVqXb3mT0sL5rE2yH8w">(function(){var sctm=false;(function(){sctm&&google.tick("load",'
        '"pbsst");}).call(this);})();</script></head><body>'
        + noscript
        + '<script nonce="Jd9cVqXb3mT0sL5rE2yH8w">//# sourceMappingURL=data:application/json;charset=utf-8;base64,'
        "eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbIiJdLCJzb3VyY2VzQ29udGVudCI6WyIgIl0sIm5hbWVzIjpbImNsb3N1cmVEeW5hbWljQnV0dG9uIl19"
        '</script><div class="gTMtLb fp-nh" id="lb"></div>' + trouble + "</body></html>"
    )


def consent_page() -> str:
    """consent.google.com's "Before you continue to Google" page (EU networks)."""
    hidden = (
        '<input type="hidden" name="gl" value="DE"><input type="hidden" name="m" value="0">'
        '<input type="hidden" name="app" value="0"><input type="hidden" name="pc" value="srp">'
        '<input type="hidden" name="continue" value="https://www.google.com/search?q=x&amp;hl=en">'
        '<input type="hidden" name="x" value="6"><input type="hidden" name="bl" value="boq_identityfrontenduiserver">'
        '<input type="hidden" name="hl" value="en"><input type="hidden" name="src" value="1">'
        '<input type="hidden" name="cm" value="2">'
    )
    return (
        '<!doctype html><html lang="en" dir="ltr"><head><meta charset="utf-8"><title>Before you continue to Google'
        '</title></head><body><div class="KxvlWc"><h1 class="I90TVb" id="S3BnEe">Before you continue to Google</h1>'
        "<div>We use cookies and data to deliver and maintain Google services.</div>"
        '<form action="https://consent.google.com/save" method="POST">'
        + hidden
        + '<input type="hidden" name="set_eom" value="true"><button class="tHlp8d" aria-label="Reject all">Reject all'
        '</button></form><form action="https://consent.google.com/save" method="POST">'
        + hidden
        + '<input type="hidden" name="set_eom" value="false"><button class="tHlp8d" aria-label="Accept all">Accept all'
        "</button></form></div></body></html>"
    )


def sample_results(query: str, n: int = 30) -> list[GoogleResult]:
    """`n` plausible results for `query`, with bold terms, entities and a date like the real snippets."""
    words = html.escape(query)
    slug = quote(query.replace(" ", "-"))
    return [
        GoogleResult(
            title=f"{words} &#8212; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{slug}/part-{i}?ref=g&lang=en",
            snippet=(
                (f'<span class="r0bn4c rQMQod">Mar {i % 28 + 1}, 2026 · </span>' if i % 3 == 0 else "")
                + f"Learn about <b>{words}</b> in part {i}: installation, configuration &amp; troubleshooting. "
                f"This page explains how <b>{words}</b> works under load, with benchmarks and a FAQ."
            ),
        )
        for i in range(1, n + 1)
    ]


class FakeGoogle(FakeServer):
    """Answers GET /search with a page of 10 results from `results` (default: 30 built from the
    query) at the asked `start`, in `variant`; GET /sorry/index with the CAPTCHA (429)."""

    provider_id = "google"

    def __init__(self, results: Sequence[GoogleResult] | None = None, variant: Variant = "basic") -> None:
        super().__init__()
        self.results = results
        self.variant: Variant = variant

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method == "GET" and request.path == "/sorry/index":
            return Reply(429, challenge_page(), content_type=_HTML)
        if request.method != "GET" or request.path != "/search":
            return NOT_FOUND
        args = request.args
        query = args.get("q", "")
        start = int(args["start"]) if args.get("start", "").isdigit() else 0
        results = engine_results(query, self.results, sample_results)
        page = results[start : start + PAGE_SIZE]
        if not page:
            return Reply(200, no_results_page(query, self.variant), content_type=_HTML)
        more = start + PAGE_SIZE < len(results)
        return Reply(200, results_page(query, page, variant=self.variant, start=start, more=more), content_type=_HTML)
