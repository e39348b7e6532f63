"""DuckDuckGo: the keyless HTML frontend, always available, last in the chain.

POST https://html.duckduckgo.com/html/ as a form (q, kl=us-en, df, b) with a desktop Chrome's
headers; the result page is parsed with selectolax (Lexbor). Results are the `div.result`
blocks: title and href from the first `a.result__a`, snippet from the first `.result__snippet`;
`//duckduckgo.com/l/?uddg=<target>` redirects are unwrapped. Ads are dropped (their links go
through `duckduckgo.com/y.js`). The bot challenge (`anomaly-modal` / `anomaly.js`, served with
200 or 202) is an error, never "no results".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar, Final
from urllib.parse import unquote

from selectolax.lexbor import LexborHTMLParser
from yarl import URL as _YarlURL

from ..errors import SearchProviderError
from ..types import SearchParams, SearchResponse, SearchSource
from ..wire import HttpRequest, HttpResponse
from ._base import HttpProvider, Support, clamp_count, classify_http_error, retry_after_seconds

if TYPE_CHECKING:
    from ..context import ProviderContext

URL: Final = "https://html.duckduckgo.com/html/"
DEFAULT_RESULTS: Final = 10
MAX_RESULTS: Final = 20
_DF: Final = {"day": "d", "week": "w", "month": "m", "year": "y"}
HEADERS: Final = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
    "application/signed-exchange;v=b3;q=0.7",
    "Accept-Language": "en,en-US;q=0.9",
    "Cache-Control": "max-age=0",
    "Content-Type": "application/x-www-form-urlencoded",
    "Priority": "u=0, i",
    "Sec-Ch-Ua": '"Google Chrome";v="149", "Chromium";v="149", "Not)A;Brand";v="24"',
    "Sec-Ch-Ua-Mobile": "?0",
    "Sec-Ch-Ua-Platform": '"macOS"',
    "Sec-Fetch-Dest": "document",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-User": "?1",
    "Upgrade-Insecure-Requests": "1",
    "User-Agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/149.0.0.0 Safari/537.36",
    "Referer": "https://html.duckduckgo.com/",
}
CHALLENGE_MESSAGE: Final = (
    "DuckDuckGo blocked the request with a bot-detection challenge. DuckDuckGo throttles automated HTML "
    "searches from datacenter/shared-egress IPs; configure a credentialed provider such as Brave, Tavily, "
    "Exa, or Kagi for reliable web search."
)
_UDDG_RE: Final = re.compile(r"[?&]uddg=([^&]+)")
_SELECTOR: Final = "div.result a.result__a[href], div.result .result__snippet"
_AD_PREFIX: Final = "https://duckduckgo.com/y.js"


class DuckDuckGo(HttpProvider):
    id = "duckduckgo"
    supports: ClassVar[dict[str, Support]] = {"recency": "native", "limit": "native", "num_search_results": "native"}

    def build_request(self, params: SearchParams, ctx: ProviderContext) -> HttpRequest:
        form = [("q", params.query), ("kl", "us-en")]
        if params.recency in _DF:
            form.append(("df", _DF[params.recency]))
        form.append(("b", ""))
        return HttpRequest("POST", ctx.endpoint(self.id, URL), headers=HEADERS, form=form)

    def param_notices(self, params: SearchParams, ctx: ProviderContext) -> list[str]:
        return clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[1]

    def parse_response(self, response: HttpResponse, params: SearchParams, ctx: ProviderContext) -> SearchResponse:
        body = response.body
        if b"anomaly-modal" in body or b"anomaly.js" in body:
            raise SearchProviderError(self.id, CHALLENGE_MESSAGE, 429)
        if not response.ok:  # 202 is a normal answer here; 200-299 all parse
            raise classify_http_error(self.id, response) or _html_error(response)
        limit = clamp_count(params, DEFAULT_RESULTS, MAX_RESULTS, self.label)[0]
        return SearchResponse(provider=self.id, sources=tuple(parse_results(body, limit)))


def parse_results(html: bytes | str, limit: int = MAX_RESULTS) -> list[SearchSource]:
    """The organic results of a DuckDuckGo HTML page, deduplicated by URL, at most `limit`.

    One selector pass over the parsed tree, in document order: each `a.result__a` in a
    `div.result` opens a result, the `.result__snippet` after it fills its snippet.
    """
    sources: list[SearchSource] = []
    seen: set[str] = set()
    title = url = snippet = None
    for node in LexborHTMLParser(_results_part(html)).css(_SELECTOR):
        if node.tag == "a" and "result__a" in (node.attributes.get("class") or ""):
            _emit(sources, seen, title, url, snippet)
            if len(sources) >= limit:
                return sources
            title = _text(node.text(deep=True, separator=" "))
            url = unwrap_href(node.attributes.get("href") or "")
            snippet = None
        elif snippet is None and title is not None:
            snippet = _text(node.text(deep=True, separator=" "))
    _emit(sources, seen, title, url, snippet)
    return sources[:limit]


def _results_part(html: bytes | str) -> bytes:
    """From the results container on: the header and search form hold no results."""
    page = html.encode() if isinstance(html, str) else html
    start = page.find(b'<div id="links"')
    return page[start:] if start > 0 else page


def _emit(sources: list[SearchSource], seen: set[str], title: str | None, url: str | None, snippet: str | None) -> None:
    if not title or url is None or url in seen or url.startswith(_AD_PREFIX):
        return
    seen.add(url)
    sources.append(SearchSource(title=title, url=url, snippet=snippet or None))


def unwrap_href(href: str) -> str | None:
    """The target of a result link: the `uddg` redirect decoded, `//x` made https, else None."""
    href = href.replace("&amp;", "&")
    match = _UDDG_RE.search(href)
    if match:
        encoded = match.group(1)
        if "+" not in encoded:  # yarl's C unquoter is 10x faster, but reads "+" as a space
            decoded = _YarlURL("http://x/?uddg=" + encoded).query.get("uddg", "")
            if "%" not in decoded and "\ufffd" not in decoded:
                return decoded
        try:  # decodeURIComponent semantics: "+" kept, invalid UTF-8 rejected
            return unquote(encoded, errors="strict")
        except UnicodeDecodeError:
            return None
    if href.startswith("//"):
        return "https:" + href
    if href.startswith(("http://", "https://")):
        return href
    return None


def _text(value: str) -> str:
    return " ".join(value.split())


def _html_error(response: HttpResponse) -> SearchProviderError:
    retry = retry_after_seconds(response.headers)
    message = f"DuckDuckGo HTML error ({response.status})"
    if retry is not None:
        message += f"; retry after {retry:g} s"
    return SearchProviderError("duckduckgo", message, response.status, retry_after=retry)


PROVIDER: Final = DuckDuckGo()
