"""A fake www.ecosia.org: result pages shaped like the real ones (paged by `p`), the empty page,
and the Cloudflare pages Ecosia serves to plain HTTP clients (challenge, Turnstile, block)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, quote_plus, urlsplit

from ._html import NOT_FOUND, engine_results, html_reply
from ._server import FakeServer, RecordedRequest, Reply

__all__ = [
    "ChallengeKind",
    "EcosiaResult",
    "FakeEcosia",
    "block_page",
    "challenge_page",
    "no_results_page",
    "results_page",
    "sample_results",
]

#: Organic results on one page, as on the real pages.
PAGE_SIZE = 10
ChallengeKind = Literal["managed", "turnstile", "legacy"]


@dataclass(frozen=True, slots=True)
class EcosiaResult:
    title: str
    url: str
    snippet: str = ""
    ad: bool = False  # a server-rendered ad, inside a `mainline-result-ad` wrapper
    site: str = ""  # the source name shown above the title ("Reddit", "Wikipedia")


_HEAD = """<!DOCTYPE html>
  <html lang="en">
    <head>
      <link rel="stylesheet" type="text/css" href="/static/web/assets/static/style.BymofaCS.css">
      <link rel="modulepreload" href="/static/web/assets/entries/src_pages_search.CLYHF58s.js" as="script" type="text/javascript">
      <meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{q} - Ecosia</title>
<meta name="referrer" content="origin-when-cross-origin">
<meta name="keywords" content="ecosia, green, search, engine">
<meta property="og:url" name="og:url" content="https://www.ecosia.org/">
<link rel="search" type="application/opensearchdescription+xml" title="Ecosia" href="/static/opensearch.xml">
<link rel="shortcut icon" href="/static/icons/favicon.ico" type="image/x-icon" sizes="16x16 24x24 32x32 64x64">
<meta name="description" content="Ecosia uses 100% of its profits for the planet and produces enough renewable energy to power all searches twice over.">
<meta property="og:title" name="og:title" content="Ecosia - the search engine that plants trees">
<meta name="country" content="US">
    </head>
    <body>
      <div id="app" data-server-rendered="true"><div class="layout" data-v-cf0da602 data-v-e535bc57><a href="#main" data-test-id="layout-skip-link" class="button layout__skip-link" data-v-cf0da602><span class="button__content"><span data-test-id="button-text" class="button__text"> Skip to main content </span></span></a><div data-test-id="layout-header" class="main-header main-header--border main-header--is-at-top" data-v-b8537585><header aria-label="Main header" data-test-id="main-header-content" class="main-header__content" data-v-b8537585><div class="main-header__navigation" data-v-b8537585><div class="main-header__logo-wrapper" data-v-b8537585><div class="main-header__logo" data-v-b8537585><a href="/" aria-label="Ecosia Homepage" rel="noopener" data-test-id="main-header-logo" class="main-header__logo-link logo" data-v-1340b595></a></div></div><form action="/search" method="GET" role="search" autocomplete="off" data-test-id="main-header-search-form" class="search-form search-form--variant-medium main-header__search" data-v-2b32ef0d><div class="search-form__mobile-wrapper" data-v-2b32ef0d><div data-test-id="search-form-search-field" class="search-form__search-field" data-v-2b32ef0d><div class="search-form__input-wrapper" data-v-2b32ef0d><input placeholder="Search the web..." aria-label="Search the web" role="combobox" type="search" name="q" autocomplete="off" autocapitalize="off" spellcheck="false" required="required" data-test-id="search-form-input" value="{q}" class="search-form__input" data-v-2b32ef0d><div class="search-form__suggestions" data-v-2b32ef0d><ul id="search-form-suggestion-list" role="listbox" data-test-id="search-form-suggestions" class="search-form__suggestions-list suggestion-list" style="display:none;" data-v-4218a2d6></ul></div></div><button type="submit" aria-label="Search" data-test-id="search-form-submit" class="button search-form__submit" data-v-3f81533f><span class="button__content"><span data-test-id="button-text" class="button__text"></span></span></button></div></div></form><div class="main-header__space" data-v-b8537585></div></div><div class="main-header__search-navigation" data-v-b8537585><nav aria-label="Search menu" data-test-id="layout-navigation" class="search-navigation" data-v-93c83516><ul aria-label="Search menu" role="menubar" data-test-id="search-navigation-desktop-list" class="search-navigation__list" data-v-93c83516><li data-test-id="search-navigation-item-web" role="none" class="search-navigation__item"><a href="/search?q={qp}" rel="noopener" target="_self" role="menuitem" data-test-id="search-navigation-web" class="tab tab--highlighted"> Web </a></li><li data-test-id="search-navigation-item-images" role="none" class="search-navigation__item"><a href="/images?q={qp}" rel="noopener" target="_self" role="menuitem" data-test-id="search-navigation-images" class="tab"> Images </a></li><li data-test-id="search-navigation-item-news" role="none" class="search-navigation__item"><a href="/news?q={qp}" rel="noopener" target="_self" role="menuitem" data-test-id="search-navigation-news" class="tab"> News </a></li><li data-test-id="search-navigation-item-videos" role="none" class="search-navigation__item"><a href="/videos?q={qp}" rel="noopener" target="_self" role="menuitem" data-test-id="search-navigation-videos" class="tab"> Videos </a></li><li role="none" class="search-navigation__item"><a href="https://www.google.com/maps/search/?api=1&amp;query={qp}" rel="noopener" target="_blank" role="menuitem" data-test-id="search-navigation-maps-google" class="tab"> Maps </a></li></ul><div data-test-id="search-navigation-item-chat" role="none" class="search-navigation__item"><a href="/ai-chat?q={qp}&amp;origin=search" rel="noopener" target="_self" role="menuitem" data-test-id="search-navigation-chat" class="tab tab--icon"> AI Chat </a></div></nav></div></header></div><section id="search-filters" role="menubar" aria-label="Filters" data-test-id="search-filters" class="search-filters" data-v-d7b318ab><div data-test-id="search-filter-search-region" class="filter search-filters__filter filter--selected"><button type="button" role="menuitem" aria-label="Search region" data-test-id="filter-button" class="button filter__button"><span class="button__content"><span data-test-id="button-text" class="button__text"><span class="filter__text"> Search region:  <span data-test-id="search-filters-current-region">United States (English)</span></span></span></span></button></div><div data-test-id="search-filter-freshness" class="filter search-filters__filter"><button type="button" role="menuitem" aria-label="Any time" data-test-id="filter-button" class="button filter__button"><span class="button__content"><span data-test-id="button-text" class="button__text"><span class="filter__text"> Any time </span></span></span></button></div></section><main id="main" tabindex="-1" data-test-id="layout-content" class="layout__content" data-v-cf0da602><div class="web" data-v-cf0da602 data-v-e535bc57><h1 id="web-heading" data-test-id="web-title" class="web__title heading heading--h1"> Search </h1>"""

_MAINLINE_START = """<section data-test-id="mainline" class="mainline web__mainline" data-v-ae503b7b data-v-e535bc57><div class="mainline__content" data-v-ae503b7b><div data-test-id="meta-results" class="meta-results" data-v-ae503b7b></div><div data-v-ae503b7b><div data-test-id="mainline-result-ad" class="mainline__result-wrapper mainline__result-wrapper--visible" data-v-ae503b7b><div id="ad-google-1" data-test-id="ad-google" bingadspingsuffix="" class="mainline__result" data-v-ae503b7b></div></div>"""

_RESULT = """<div data-test-id="{wrapper}" class="mainline__result-wrapper" data-v-ae503b7b><article aria-label="{label}" data-test-id="organic-result" class="result web-result mainline__result" data-v-86ad651d data-v-68c00620 data-v-ae503b7b><div class="result__body" data-v-86ad651d><div class="result__header" data-v-86ad651d><div class="result__info result__info--extended" data-v-86ad651d><span aria-hidden="true" data-test-id="web-result-favicon" class="favicon__container web-result__favicon" data-v-68c00620><img src="https://api.ecosia.org/v2/favicons/{host}" alt="" class="favicon"></span><div class="result-info result-info--complex" data-v-f0e4679c><div data-test-id="result-source-name" class="result-info__name" data-v-f0e4679c>{site}<div class="web-result__info-end web-result__info-end--extended" data-v-f0e4679c><div data-test-id="organic-result-feedback" provider="GOOGLE" class="organic-result-feedback web-result__feedback--info" data-v-7276ad47><button aria-label="Result feedback" aria-expanded="false" aria-haspopup="dialog" data-test-id="organic-result-feedback-label-mobile" class="organic-result-feedback__label organic-result-feedback__label--mobile" data-v-7276ad47></button></div></div></div><div class="result-info__link-container result-info__link-container--inline" data-v-f0e4679c><a data-test-id="result-link" tabindex="-1" href="{href}" target="_self" rel="noopener" class="result-info__link result-info__link--ellipsis" data-v-f0e4679c><div data-test-id="result-source" data-v-f0e4679c><span class="result-info__domain" data-v-f0e4679c>{origin}</span><span class="result-info__breadcrumbs" data-v-f0e4679c>{crumbs}</span></div></a></div></div></div><div class="result__title" data-v-86ad651d><a data-test-id="result-link" href="{href}" target="_self" rel="noopener" class="result__link result__link link link--as-a link--color-result link--variant-primary" data-v-f0114578 data-v-86ad651d><h2 data-test-id="result-title" class="result-title__heading" data-v-f0114578 data-v-86ad651d>{title}</h2></a></div></div>{columns}<div class="result__extra-content" data-v-86ad651d></div></div></article></div>"""

_COLUMNS = """<div class="result__columns" data-v-86ad651d><div class="result__columns-start" data-v-86ad651d><div data-test-id="result-description" class="result__description" data-v-86ad651d><p data-test-id="web-result-description" class="web-result__description" data-v-86ad651d data-v-68c00620>{snippet}</p></div></div></div>"""

_RELATED = """<a href="/search?q={qp}" aria-label="{q}" data-test-id="related-queries-link-{slug}" color="result" class="link link--as-a link--color-result link-bubble related-queries__link-bottom" data-v-22cf0481><div class="related-queries__text-container"><span data-test-id="related-queries-text" class="related-queries__text"><strong>{q}</strong></span></div></a>"""

_MAINLINE_END = """<div data-test-id="mainline-result-ad" class="mainline__result-wrapper mainline__result-wrapper--visible" data-v-ae503b7b><div id="ad-google-12" data-test-id="ad-google" bingadspingsuffix="" class="mainline__result" data-v-ae503b7b></div></div></div><div data-test-id="web-related-queries" class="mainline__result related-queries__bottom" data-v-22cf0481><h3 data-test-id="related-queries-header" class="related-queries__header-bottom"> Searches related to {q} </h3><div class="related-queries__links-bottom">{related}</div></div></div><div class="mainline__footer" data-v-ae503b7b><div data-test-id="simplified-pagination" class="simplified-pagination" data-v-9cb3b528>{pagination}</div></div></section><aside data-test-id="sidebar" class="sidebar web__sidebar" data-v-d3379ccb data-v-e535bc57></aside>"""

_PREVIOUS = """<a data-test-id="previous-button" href="/search?method=index&amp;q={qp}&amp;p={p}" as="a" variant="outline" class="button control base-button--variant-outline"><span class="button__content"><span data-test-id="button-text" class="button__text"> Previous </span></span></a>"""
_NEXT = """<a data-test-id="next-button" href="/search?method=index&amp;q={qp}&amp;p={p}" as="a" variant="outline" class="button control base-button--variant-outline"><span class="button__content"><span data-test-id="button-text" class="button__text"> Next </span></span></a>"""

_NO_RESULTS = """<aside data-test-id="sidebar" class="sidebar web__sidebar" data-v-d3379ccb data-v-e535bc57></aside><div data-test-id="web-no-results" class="no-results web__no-results" data-v-cb6ed5b5 data-v-e535bc57><section class="message-tips" data-v-1a83ae41 data-v-cb6ed5b5><p data-test-id="message-tips-message" class="message-tips__title" data-v-1a83ae41> Unfortunately we didn’t find any results for “<strong data-test-id="no-results-query" class="no-results__query">{q}</strong>” </p><div data-test-id="message-tips-content" class="message-tips__content"><span data-test-id="message-tips-tips-message">Try these tips:</span><ul data-test-id="message-tips-tips" class="message-tips__tips"><li> Check that all words are spelled correctly </li><li> Try different or fewer keywords </li></ul></div></section><div class="no-results__footer"><div data-test-id="simplified-pagination" class="simplified-pagination"></div></div></div>"""

_TAIL = """</div></main><div class="layout__footer" data-v-cf0da602><footer data-test-id="layout-footer" class="main-footer" data-v-5d19e374><div class="main-footer__content" data-v-5d19e374><div class="main-footer__menu" data-v-5d19e374><h2 class="sr-only"> Support Links </h2><ul class="main-footer__menu-list"><li class="main-footer__menu-item main-footer__menu-item--privacy"><a href="https://www.ecosia.org/privacy" data-test-id="main-footer-link" class="main-footer__link link"> Privacy </a></li><li class="main-footer__menu-item main-footer__menu-item--imprint"><a href="https://www.ecosia.org/imprint" data-test-id="main-footer-link" class="main-footer__link link"> Imprint </a></li><li class="main-footer__menu-item main-footer__menu-item--help"><a href="https://support.ecosia.org/" data-test-id="main-footer-link" class="main-footer__link link"> Help and Legal </a></li><li class="main-footer__menu-item main-footer__menu-item--settings"><a href="https://www.ecosia.org/settings" data-test-id="main-footer-link" class="main-footer__link link"> Settings </a></li></ul></div></div></footer></div></div></div>
      <script id="vike_pageContext" type="application/json">{{"pageId":"/src/pages/search","initialState":{{"main":{{"pagination":{{"type":"simplifiedPagination","hasNextPage":{more}}},"mainlineAdResultsCount":0}},"global":{{"country":"United States","countryCode":"US","locale":"en"}},"user":{{"adultFilter":"i","bingMarketCode":"en-us","defaultMarket":"en-us","language":"en","marketApplied":1}}}}}}</script>
      <script src="/static/web/assets/entries/entry-server-routing.ZQcsRy_x.js" type="module" async></script>
    </body>
  </html>
"""


def _crumbs(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else url
    steps = [step for step in parts.path.split("/") if step]
    return origin, ("› " + " › ".join(steps)) if steps else ""


def _result(result: EcosiaResult) -> str:
    origin, crumbs = _crumbs(result.url)
    site = (
        f'<span class="result-info__name-label" data-v-f0e4679c>{html.escape(result.site)}</span>'
        if result.site
        else ""
    )
    columns = _COLUMNS.format(snippet=result.snippet) if result.snippet else ""
    return _RESULT.format(
        wrapper="mainline-result-ad" if result.ad else "mainline-result-web",
        label=html.escape(html.unescape(result.title)),
        host=quote(urlsplit(result.url).netloc or "x", safe=""),
        site=site,
        href=html.escape(result.url),
        origin=html.escape(origin),
        crumbs=html.escape(crumbs),
        title=result.title,
        columns=columns,
    )


def results_page(query: str, results: Sequence[EcosiaResult], page: int = 0, more: bool = True) -> str:
    """A results page as www.ecosia.org serves it (page `page`, 0-based; `more` says a next page
    exists). Titles and snippets are inserted as HTML (so tests can include tags and entities)."""
    q, qp = html.escape(query), html.escape(quote_plus(query))
    related = "".join(
        _RELATED.format(qp=html.escape(quote_plus(f"{query} {word}")), q=html.escape(f"{query} {word}"), slug=word)
        for word in ("examples", "tutorial", "vs", "github")
    )
    pagination = (_PREVIOUS.format(qp=qp, p=page - 1) if page else "") + (
        _NEXT.format(qp=qp, p=page + 1) if more else ""
    )
    body = (
        _MAINLINE_START
        + "".join(_result(r) for r in results)
        + _MAINLINE_END.format(q=q, related=related, pagination=pagination)
    )
    return _HEAD.format(q=q, qp=qp) + body + _TAIL.format(more="true" if more else "false")


def no_results_page(query: str) -> str:
    """The page served when nothing matches (and past the last page)."""
    q, qp = html.escape(query), html.escape(quote_plus(query))
    return _HEAD.format(q=q, qp=qp) + _NO_RESULTS.format(q=q) + _TAIL.format(more="false")


def challenge_page(kind: ChallengeKind = "managed") -> str:
    """A Cloudflare challenge as Ecosia's front serves it to plain HTTP clients: the managed
    "Just a moment..." page (its script loads /cdn-cgi/challenge-platform/), Ecosia's Turnstile
    page ("Confirm you're not a robot", a `cf-turnstile-response` input), or the older page with
    a `#challenge-form`."""
    if kind == "turnstile":
        return """<html xmlns="http://www.w3.org/1999/xhtml" dir="ltr"><head><title>Just a moment...</title></head><body><main><h1>Confirm you’re not a robot</h1><p>Our system has detected unusual traffic from your network. Please solve the challenge below to show you’re not a robot.</p><div><div class="main-wrapper" role="main"><div class="main-content"><h2 id="FbRG5"></h2><p id="jpqrL2"></p><div id="BbLB6" style=""><div><div><input type="hidden" name="cf-turnstile-response" id="cf-chl-widget-a1b2c_response"/></div></div></div><div id="TQpKs1" style="display: none;"><div>Verification successful. Waiting for www.ecosia.org to respond</div></div><div id="ROlTq4" class="spacer loading-verifying" style="display: none;"><div class="lds-ring"><div></div><div></div><div></div><div></div></div></div></div></div></div></main></body></html>"""
    if kind == "legacy":
        return """<!DOCTYPE HTML><html lang="en-US"><head><meta charset="UTF-8" /><title>Just a moment...</title><meta name="robots" content="noindex, nofollow" /></head><body><table width="100%" height="100%" cellpadding="20"><tr><td align="center" valign="middle"><div class="cf-browser-verification cf-im-under-attack"><noscript><h1 data-translate="turn_on_js" style="color:#bd2426;">Please turn JavaScript on and reload the page.</h1></noscript><div id="cf-content"><h1><span data-translate="checking_browser">Checking your browser before accessing</span> www.ecosia.org.</h1></div><form class="challenge-form" id="challenge-form" action="/search?q=x&amp;__cf_chl_jschl_tk__=pmd_0b1c2d3e" method="POST" enctype="application/x-www-form-urlencoded"><input type="hidden" name="r" value="a1b2c3d4"/><input type="hidden" name="jschl_vc" value="1f2e3d4c"/><input type="hidden" name="pass" value="1700000000.123-AbCdEf"/><input type="hidden" id="jschl-answer" name="jschl_answer"/></form></div></td></tr></table></body></html>"""
    return """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"><meta http-equiv="X-UA-Compatible" content="IE=Edge"><meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"><style>*{box-sizing:border-box;margin:0;padding:0}html{line-height:1.15;-webkit-text-size-adjust:100%;color:#313131;font-family:system-ui,-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto}body{display:flex;flex-direction:column;height:100vh;min-height:100vh}.main-content{margin:8rem auto;max-width:60rem;padding-left:1.5rem}</style></head><body><div class="main-wrapper" role="main"><div class="main-content"><noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to continue</span></div></noscript></div></div><script>(function(){window._cf_chl_opt={cvId: '3',cZone: "www.ecosia.org",cType: 'managed',cRay: '8f1e2d3c4b5a6978',cH: 'x1y2z3',cUPMDTk: "\\/search?q=x&__cf_chl_tk=AbCdEf-1700000000-1.0.1.1-XyZ",cFPWv: 'g',cITimeS: '1700000000',cTplV: 5,cTplB: 'cf',cK: "",fa: "\\/search?q=x&__cf_chl_f_tk=AbCdEf-1700000000-1.0.1.1-XyZ",md: "mdvalue",mdrd: "mdrdvalue"};var cpo = document.createElement('script');cpo.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f1e2d3c4b5a6978';window._cf_chl_opt.cOgUHash = location.hash === '' && location.href.indexOf('#') !== -1 ? '#' : location.hash;if (window.history && window.history.replaceState) {var ogU = location.pathname + window._cf_chl_opt.cOgUQuery + window._cf_chl_opt.cOgUHash;history.replaceState(null, null, "\\/search?q=x&__cf_chl_rt_tk=AbCdEf-1700000000-1.0.1.1-XyZ" + window._cf_chl_opt.cOgUHash);}document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>"""


def block_page() -> str:
    """Cloudflare's "Sorry, you have been blocked" page (error 1020), served with 403."""
    return """<!DOCTYPE html><!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]--><html class="no-js" lang="en-US"><head><title>Attention Required! | Cloudflare</title><meta charset="UTF-8" /><meta name="robots" content="noindex, nofollow" /><link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/cf.errors.css" /></head><body><div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper"><div class="cf-wrapper cf-header cf-error-overview"><h1 data-translate="block_headline">Sorry, you have been blocked</h1><h2 class="cf-subheadline"><span data-translate="unable_to_access">You are unable to access</span> ecosia.org</h2></div><div class="cf-section cf-wrapper"><div class="cf-columns two"><div class="cf-column"><h2 data-translate="blocked_why_headline">Why have I been blocked?</h2><p data-translate="blocked_why_detail">This website is using a security service to protect itself from online attacks.</p></div></div></div><div class="cf-error-footer cf-wrapper"><p><span class="cf-footer-item">Cloudflare Ray ID: <strong class="font-semibold">8f1e2d3c4b5a6978</strong></span></p></div></div></div></body></html>"""


def sample_results(query: str, n: int = 30) -> list[EcosiaResult]:
    """`n` plausible results for `query`: dated snippets like Google-served ones, entities, sites."""
    words = html.escape(query)
    slug = quote(query.replace(" ", "-"))
    return [
        EcosiaResult(
            title=f"{words} &#8212; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{slug}/part-{i}?ref=ecosia&lang=en",
            snippet=(
                (f"Aug {i % 27 + 1}, 2026 ... " if i % 3 == 0 else "")
                + f"Learn about {words} in part {i}: installation, configuration &amp; troubleshooting. "
                f"This page explains how {words} works under load, with benchmarks, examples and a FAQ ..."
            ),
            site="Example Docs" if i % 2 else "",
        )
        for i in range(1, n + 1)
    ]


class FakeEcosia(FakeServer):
    """Answers GET /search with page `p` (0-based, 10 results a page) of the results for `q`:
    `results` when set, else `sample_results(q)`, moved onto the hosts of `site:` operators."""

    provider_id = "ecosia"

    def __init__(self, results: Sequence[EcosiaResult] | None = None) -> None:
        super().__init__()
        self.results = results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "GET" or request.path != "/search":
            return NOT_FOUND
        args = request.args
        query = args.get("q", "")
        page = int(args["p"]) if args.get("p", "").isdigit() else 0
        results = engine_results(query, self.results, sample_results)
        shown = results[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        if not shown:
            return html_reply(no_results_page(query))
        more = len(results) > (page + 1) * PAGE_SIZE
        return html_reply(results_page(query, shown, page, more))
