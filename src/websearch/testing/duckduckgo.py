"""A fake html.duckduckgo.com: result pages shaped like the real ones, the bot challenge, no results."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from ._html import NOT_FOUND, engine_results
from ._server import FakeServer, RecordedRequest, Reply

__all__ = ["DdgResult", "FakeDuckDuckGo", "challenge_page", "no_results_page", "results_page"]


@dataclass(frozen=True, slots=True)
class DdgResult:
    """One result on the fake's HTML page (`ad` marks it an ad; `direct_href` skips the uddg redirect)."""

    title: str
    url: str
    snippet: str = ""
    ad: bool = False
    direct_href: bool = False  # href is the target itself instead of a uddg redirect


_HEAD = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
  <meta http-equiv="content-type" content="text/html; charset=UTF-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1.0, maximum-scale=3.0, user-scalable=1" />
  <meta name="referrer" content="origin" />
  <meta name="HandheldFriendly" content="true" />
  <meta name="robots" content="noindex, nofollow" />
  <title>{q} at DuckDuckGo</title>
  <link title="DuckDuckGo (HTML)" type="application/opensearchdescription+xml" rel="search" href="//duckduckgo.com/opensearch_html_v2.xml" />
  <link href="//duckduckgo.com/favicon.ico" rel="shortcut icon" />
  <link rel="icon" href="//duckduckgo.com/favicon.ico" type="image/x-icon" />
  <link rel="stylesheet" href="//duckduckgo.com/dist/h.7f5d3c2b1a.css" type="text/css"/>
  <style>.result__a{{color:#1a0dab}} .result__snippet b{{font-weight:700}} .result--ad{{background:#f7f7f7}}</style>
</head>
<body class="body--html">
  <a name="top" id="top"></a>
  <form action="/html/" method="post">
    <input type="text" name="state_hidden" id="state_hidden" />
  </form>
  <div>
    <div class="site-wrapper-border"></div>
    <div id="header" class="header cw header--html">
      <a title="DuckDuckGo" href="/html/" class="header__logo-wrap"><span class="header__logo">DuckDuckGo</span></a>
      <form name="x" class="header__form" action="/html/" method="post">
        <div class="search search--header">
          <input name="q" autocomplete="off" class="search__input" id="search_form_input_homepage" type="text" value="{q}" />
          <input name="b" id="search_button_homepage" class="search__button search__button--html" value="" title="Search" alt="Search" type="submit" />
        </div>
        <div class="frm__select"><select name="kl"><option value="" >All Regions</option><option value="us-en" selected>US (English)</option><option value="uk-en" >UK (English)</option><option value="de-de" >Germany</option><option value="fr-fr" >France</option><option value="jp-jp" >Japan</option></select></div>
        <div class="frm__select frm__select--last"><select class="" name="df"><option value="" selected>Any Time</option><option value="d" >Past Day</option><option value="w" >Past Week</option><option value="m" >Past Month</option><option value="y" >Past Year</option></select></div>
      </form>
    </div>
    <div class="filters">
      <div class="zci-wrapper"></div>
      <div id="links" class="results">
"""

_TAIL = """        <div class="nav-link">
          <form action="/html/" method="post">
            <input type="submit" class="btn btn--alt" value="Next" />
            <input type="hidden" name="q" value="{q}" /><input type="hidden" name="s" value="10" />
            <input type="hidden" name="nextParams" value="" /><input type="hidden" name="v" value="l" />
            <input type="hidden" name="o" value="json" /><input type="hidden" name="dc" value="11" />
            <input type="hidden" name="api" value="d.js" /><input type="hidden" name="vqd" value="4-123456789012345678901234567890" />
            <input name="kl" value="us-en" type="hidden" />
          </form>
        </div>
        <div class=" feedback-btn"><a rel="nofollow" href="//duckduckgo.com/feedback.html" target="_new">Feedback</a></div>
        <div class="clear"></div>
      </div>
    </div>
  </div>
  <img src="//duckduckgo.com/t/sl_h"/>
</body>
</html>
"""

_RESULT = """        <div class="result {kind}">
          <div class="links_main links_deep result__body">
            <h2 class="result__title">
              <a rel="nofollow" class="result__a" href="{href}">{title}</a>
            </h2>
            <div class="result__extras">
              <div class="result__extras__url">
                <span class="result__icon"><a rel="nofollow" href="{href}"><img class="result__icon__img" width="16" height="16" alt="" src="//external-content.duckduckgo.com/ip3/{host}.ico" name="i15" /></a></span>
                <a class="result__url" href="{href}">{display}</a>
              </div>
            </div>
            <a class="result__snippet" href="{href}">{snippet}</a>
            <div class="clear"></div>
          </div>
        </div>
"""


def _href(result: DdgResult) -> str:
    if result.ad:
        return f"https://duckduckgo.com/y.js?ad_domain={quote(result.url, safe='')}&amp;ad_provider=bingv7aa"
    if result.direct_href:
        return html.escape(result.url)
    return f"//duckduckgo.com/l/?uddg={quote(result.url, safe='')}&amp;rut=8e7f1c2a9b0d3e4f5a6b7c8d9e0f1a2b"


def results_page(query: str, results: Sequence[DdgResult]) -> str:
    """A results page as html.duckduckgo.com serves it. Titles and snippets are inserted as
    HTML (so tests can include `<b>` and entities)."""
    blocks = []
    for r in results:
        host = r.url.split("/")[2] if "//" in r.url else r.url
        kind = "results_links results_links_deep result--ad" if r.ad else "results_links results_links_deep web-result"
        blocks.append(
            _RESULT.format(
                kind=kind,
                href=_href(r),
                title=r.title,
                snippet=r.snippet,
                host=host,
                display=html.escape(r.url.split("://", 1)[-1]),
            )
        )
    q = html.escape(query)
    return _HEAD.format(q=q) + "".join(blocks) + _TAIL.format(q=q)


def no_results_page(query: str) -> str:
    """The page served when nothing matches."""
    body = '        <div class="no-results">No  results.</div>\n'
    q = html.escape(query)
    return _HEAD.format(q=q) + body + _TAIL.format(q=q)


def challenge_page() -> str:
    """The bot-detection page ("anomaly modal") DuckDuckGo serves to throttled clients."""
    return """<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8">
<title>DuckDuckGo</title><script src="/dist/anomaly.js"></script></head>
<body><form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=sre" method="POST">
<div class="anomaly-modal__mask"><div class="anomaly-modal__modal" data-testid="anomaly-modal">
<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
<div class="anomaly-modal__instructions">Select all squares containing a duck:</div>
<div class="anomaly-modal__puzzle"></div></div></div></form></body></html>"""


def sample_results(query: str, n: int = 30) -> list[DdgResult]:
    """`n` plausible results for `query`, with bold terms and entities like the real snippets."""
    words = html.escape(query)
    return [
        DdgResult(
            title=f"{words} &#8212; guide part {i} | Example Docs",
            url=f"https://docs.example{i % 7}.org/{quote(query.replace(' ', '-'))}/part-{i}?ref=ddg&lang=en",
            snippet=(
                f"Learn about <b>{words}</b> in part {i}: installation, configuration &amp; troubleshooting. "
                f"This page explains how <b>{words}</b> works under load, with benchmarks, examples and a FAQ "
                f"covering the most common questions asked in {2020 + i % 6}."
            ),
        )
        for i in range(1, n + 1)
    ]


class FakeDuckDuckGo(FakeServer):
    """Answers POST /html/ with a results page built from the posted query."""

    provider_id = "duckduckgo"

    def __init__(self, results: Sequence[DdgResult] | None = None) -> None:
        super().__init__()
        self.results = results

    def default_reply(self, request: RecordedRequest) -> Reply:
        if request.method != "POST" or request.path != "/html/":
            return NOT_FOUND
        query = dict(request.form()).get("q", "")
        results = engine_results(query, self.results, sample_results)
        return Reply(200, results_page(query, results), content_type="text/html; charset=UTF-8")
