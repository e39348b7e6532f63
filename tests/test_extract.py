"""The extractors: a fetched body to clean text and metadata, or a FetchError saying honestly why not.

Pages are written here by hand; PDFs are generated with fpdf2. A few benchmark pages are read when
/work/shared is present (the test skips on a clean clone).
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from fpdf import FPDF
from PIL import Image

from websearch._reading._extract import Extracted, extract, markdown_alternate
from websearch.errors import InvalidSearchParams, NeedsJavascript, NoText, PageBlocked, UnsupportedContent

URL = "https://news.example.org/2024/story"
PARAGRAPHS = [
    "The river rose three metres overnight, flooding the lower town for the first time since records began.",
    "Residents were woken by sirens shortly after two in the morning and led to the school on the hill.",
    "By noon the water had reached the market square, where traders had stacked sandbags the evening before.",
    "The mayor said the town would need help from the region to rebuild the bridge and the old mill.",
]
ARTICLE = f"""<!doctype html>
<html lang="en-GB"><head>
<meta charset="utf-8">
<title>Flood reaches the market square | The Example News</title>
<meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2024-03-05T08:00:00Z">
<link rel="alternate" type="text/markdown" href="/2024/story.md">
</head><body>
<nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></nav>
<article>
<h1>Flood reaches the market square</h1>
{"".join(f"<p>{p}</p>" for p in PARAGRAPHS)}
</article>
<footer>Copyright The Example News. All rights reserved. Subscribe to our newsletter.</footer>
<script>window.analytics = {{"id": 42}};</script>
</body></html>"""


def html_of(body: str, *, head: str = "") -> str:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


def read(body: bytes | str, content_type: str | None = "text/html", **kw: object) -> Extracted:
    raw = body.encode() if isinstance(body, str) else body
    return extract(raw, url=URL, content_type=content_type, charset=kw.pop("charset", None), **kw)  # type: ignore[arg-type]


# --- HTML ---------------------------------------------------------------------------------------


def test_an_article_gives_its_main_content_as_markdown_without_navigation_or_footer() -> None:
    page = read(ARTICLE)
    assert page.kind == "html"
    assert not page.whole_page
    for paragraph in PARAGRAPHS:
        assert paragraph in page.text
    assert "Subscribe to our newsletter" not in page.text
    assert "analytics" not in page.text
    assert "World" not in page.text.split()


def test_an_article_s_metadata_is_what_the_page_declares() -> None:
    page = read(ARTICLE)
    assert page.title is not None and "Flood reaches the market square" in page.title
    assert page.byline == "Ada Lovelace"
    assert page.published == "2024-03-05"
    assert page.language == "en-GB"
    assert page.pages is None


def test_a_page_without_a_declared_date_has_none() -> None:
    page = read(ARTICLE.replace('<meta property="article:published_time" content="2024-03-05T08:00:00Z">', ""))
    assert page.published is None


def test_text_format_is_plain_and_html_format_is_markup_of_the_main_content() -> None:
    text = read(ARTICLE, fmt="text").text
    assert PARAGRAPHS[0] in text
    assert "#" not in text
    html = read(ARTICLE, fmt="html").text
    assert "<p>" in html
    assert PARAGRAPHS[2] in html
    assert "<nav" not in html and "<script" not in html


def test_markdown_format_marks_the_heading() -> None:
    assert "# Flood reaches the market square" in read(ARTICLE).text


def test_a_page_without_main_content_gives_the_whole_visible_text_and_says_so() -> None:
    cells = "".join(
        f"<li><span>{name}</span> <span>{n}</span></li>" for n, name in enumerate(["alpha", "beta", "gamma"])
    )
    page = read(html_of(f"<div><ul>{cells}</ul></div><script>var hidden = 'no';</script>"))
    assert (page.kind, page.whole_page) == ("html", True)
    assert page.text == "alpha 0\nbeta 1\ngamma 2"


def test_readability_reads_what_trafilatura_leaves_out() -> None:
    # trafilatura drops <aside> whole; readability scores its paragraphs as the content
    page = read(html_of("<aside>" + "".join(f"<p>{p} {p}</p>" for p in PARAGRAPHS) + "</aside>"), fmt="text")
    assert not page.whole_page
    for paragraph in PARAGRAPHS:
        assert paragraph in page.text


def test_trafilatura_s_comparison_with_its_fallbacks_runs_only_for_a_short_extract(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import trafilatura

    calls: list[bool] = []
    real = trafilatura.extract

    def counted(*args: object, **kwargs: object) -> str | None:
        calls.append(bool(kwargs.get("fast")))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(trafilatura, "extract", counted)
    long_article = ARTICLE.replace("</article>", "".join(f"<p>{p} {p}</p>" for p in PARAGRAPHS) + "</article>")
    read(long_article)
    assert calls == [True]  # over SHORT characters: the fast pass alone
    calls.clear()
    read(ARTICLE)  # under SHORT: weighed against trafilatura's fallbacks as well
    assert calls[:2] == [True, False]


def test_a_short_page_is_read_not_refused() -> None:
    page = read(html_of("<p>Opening hours: 9 to 5.</p>", head="<title>Hours</title>"))
    assert "Opening hours: 9 to 5." in page.text
    assert page.title == "Hours"


def test_an_empty_small_page_has_no_text() -> None:
    with pytest.raises(NoText) as caught:
        read(html_of("<div>   </div>"))
    assert caught.value.url == URL


def test_a_javascript_application_shell_needs_javascript() -> None:
    bundle = "<script>" + "function f(a){return a*2};" * 400 + "</script>"
    shell = html_of('<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>' + bundle)
    with pytest.raises(NeedsJavascript) as caught:
        read(shell)
    assert caught.value.url == URL
    assert "browser" in caught.value.message


def test_an_empty_mount_point_on_a_small_page_needs_javascript() -> None:
    with pytest.raises(NeedsJavascript):
        read(html_of('<div id="__next"></div><script src="/_next/static/chunks/main.js"></script>'))


def test_a_large_page_with_scripts_whose_text_is_tiny_needs_javascript_even_without_a_mount_point() -> None:
    styles = "<style>" + ".c{color:red}" * 800 + "</style>"
    with pytest.raises(NeedsJavascript):
        read(html_of('<div><span>Loading</span></div><script src="/bundle.js"></script>', head=styles))


def test_a_large_page_without_scripts_gives_its_little_text() -> None:
    styles = "<style>" + ".c{color:red}" * 800 + "</style>"
    page = read(html_of("<div><span>Closed today.</span></div>", head=styles))
    assert "Closed today." in page.text


def test_an_html_format_extraction_is_never_empty_markup() -> None:
    with pytest.raises(NoText):
        read(html_of("<div><p> </p></div>"), fmt="html")
    page = read(html_of("<div><span>Closed today.</span></div>"), fmt="html")
    assert "Closed today." in page.text


CHALLENGE = html_of(
    '<div class="main-wrapper"><h1>example.org</h1><h2 id="challenge-running">Checking if the site connection is secure</h2>'
    '<form id="challenge-form" action="/?__cf_chl_f_tk=abc" method="POST"><input type="hidden" name="md" value="x"></form>'
    "</div><script>window._cf_chl_opt={cvId: '3'};</script>"
    '<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=1"></script>',
    head="<title>Just a moment...</title>",
)


def test_a_cloudflare_challenge_served_with_200_is_page_blocked() -> None:
    with pytest.raises(PageBlocked) as caught:
        read(CHALLENGE)
    assert caught.value.url == URL


def test_a_captcha_frame_on_an_almost_empty_page_is_page_blocked() -> None:
    with pytest.raises(PageBlocked):
        read(
            html_of(
                '<p>Please verify you are a human.</p><iframe src="https://newassets.hcaptcha.com/captcha/v1/x"></iframe>'
            )
        )


def test_an_article_carrying_cloudflare_s_ordinary_script_is_read() -> None:
    page = ARTICLE.replace(
        "</body>", '<script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script></body>'
    ).replace("<footer>", '<footer><div class="g-recaptcha" data-sitekey="k"></div>')
    assert PARAGRAPHS[1] in read(page).text


def test_an_article_with_a_captcha_frame_and_indented_markup_is_read() -> None:
    # The challenge check counts visible text only up to what a challenge page has at most; it
    # stopped counting on the markup's raw whitespace once, and took this article for a challenge.
    body = "".join(f"<p>\n          {PARAGRAPHS[i % len(PARAGRAPHS)]}\n          </p>\n" + " " * 400 for i in range(24))
    page = html_of(body + '<iframe src="https://www.google.com/recaptcha/api2/anchor?k=x"></iframe>')
    assert PARAGRAPHS[0] in read(page).text


def test_a_page_s_declarations_give_its_metadata_json_ld_first() -> None:
    ld = (
        '<script type="application/ld+json">{"@graph": [{"@type": "NewsArticle", "headline": "Flood in the '
        'lower town", "datePublished": "2023-11-02T22:30:00-05:00", "author": [{"name": "Ada Writer"}, '
        '{"name": "Ada Writer"}, "https://news.example.org/staff/bob"]}]}</script>'
    )
    page = read(ARTICLE.replace("</head>", ld + "</head>"))
    assert (page.title, page.byline, page.published) == ("Flood in the lower town", "Ada Writer", "2023-11-02")


def test_meta_tags_give_the_byline_and_date_and_placeholders_are_not_dates() -> None:
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    head = (
        '<title>Flood</title><meta name="byl" content="By River Board">'
        '<meta name="date" content="0001-01-01"><meta name="pubdate" content="Tue, 05 Mar 2024 08:00:00 GMT">'
    )
    page = read(html_of(f"<article>{body}</article>", head=head))
    assert (page.byline, page.published) == ("River Board", "2024-03-05")


def test_markdown_alternate_is_made_absolute() -> None:
    assert markdown_alternate(ARTICLE, URL) == "https://news.example.org/2024/story.md"
    assert markdown_alternate(ARTICLE.encode(), "https://other.example/x/") == "https://other.example/2024/story.md"
    assert markdown_alternate(html_of("<p>x</p>"), URL) is None
    assert markdown_alternate('<link rel="alternate" type="application/rss+xml" href="/feed">', URL) is None
    assert markdown_alternate("<link href='https://cdn.example/a.md' rel='alternate' type='text/markdown'>", URL) == (
        "https://cdn.example/a.md"
    )
    assert markdown_alternate('<link rel="alternate" type="text/markdown" href="javascript:alert(1)">', URL) is None


# --- charsets -------------------------------------------------------------------------------------

RUSSIAN = "Москва — столица России, крупнейший по численности населения город страны. " * 6
JAPANESE = "東京は日本の首都であり、世界最大の都市圏の一つです。多くの人々が毎日電車で通勤しています。" * 6


@pytest.mark.parametrize(("text", "codec"), [(RUSSIAN, "windows-1251"), (JAPANESE, "shift_jis")])
def test_a_non_utf8_page_declared_by_meta_only(text: str, codec: str) -> None:
    body = html_of(f"<article><p>{text}</p></article>", head=f'<meta charset="{codec}">').encode(codec)
    assert text.strip()[:20] in read(body, "text/html").text


@pytest.mark.parametrize(("text", "codec"), [(RUSSIAN, "windows-1251"), (JAPANESE, "Shift_JIS")])
def test_a_non_utf8_page_declared_by_header_only(text: str, codec: str) -> None:
    body = html_of(f"<article><p>{text}</p></article>").encode(codec)
    assert text.strip()[:20] in read(body, f"text/html; charset={codec}").text


def test_the_header_charset_wins_over_the_meta_and_the_meta_over_a_guess() -> None:
    body = html_of(f"<article><p>{RUSSIAN}</p></article>", head='<meta charset="koi8-r">').encode("cp1251")
    assert "Москва" in read(body, "text/html; charset=windows-1251").text
    assert "Москва" not in read(body, "text/html").text  # the (wrong) meta is believed without a header


def test_the_charset_argument_counts_as_the_header() -> None:
    body = html_of(f"<article><p>{JAPANESE}</p></article>").encode("shift_jis")
    assert "東京は日本の首都" in read(body, "text/html", charset="shift_jis").text


def test_a_http_equiv_declaration_is_read() -> None:
    head = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
    body = html_of(f"<article><p>{RUSSIAN}</p></article>", head=head).encode("cp1251")
    assert "крупнейший" in read(body).text


def test_an_undeclared_page_is_guessed_and_bad_bytes_never_raise() -> None:
    body = html_of(f"<article><p>{RUSSIAN}</p></article>").encode("cp1251")
    assert "Москва" in read(body).text
    broken = b"<html><body><p>" + b"caf\xe9 \xff\xfe\x80 ok " * 60 + b"</p></body></html>"
    assert "ok" in read(broken, "text/html; charset=utf-8").text


def test_a_utf8_bom_wins_over_a_wrong_header() -> None:
    body = b"\xef\xbb\xbf" + "Grüße aus Köln\n".encode()
    assert read(body, "text/plain; charset=iso-8859-1").text == "Grüße aus Köln"


# --- PDF ----------------------------------------------------------------------------------------


def text_pdf(pages: list[str], **info: str) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    if "title" in info:
        pdf.set_title(info["title"])
    if "author" in info:
        pdf.set_author(info["author"])
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def image_pdf() -> bytes:
    picture = io.BytesIO()
    Image.new("RGB", (60, 40), (200, 30, 30)).save(picture, format="PNG")
    pdf = FPDF()
    pdf.add_page()
    pdf.image(picture, x=10, y=10, w=100)
    return bytes(pdf.output())


def test_a_pdf_is_read_page_by_page_with_markers_and_its_info() -> None:
    body = text_pdf(
        ["First page about rivers.", "Second page about bridges.", "Third page about mills."],
        title="Flood report",
        author="River Board",
    )
    page = read(body, "application/pdf")
    assert page.kind == "pdf"
    assert page.pages == 3
    assert page.title == "Flood report"
    assert page.byline == "River Board"
    assert page.published is not None and page.published[:2] == "20"
    assert page.text.startswith("[page 1]\n\nFirst page about rivers.")
    assert "\n\n[page 2]\n\nSecond page about bridges.\n\n[page 3]\n\nThird page about mills." in page.text


def test_a_pdf_sent_as_octet_stream_is_sniffed() -> None:
    page = read(text_pdf(["Sniffed by its header."]), "application/octet-stream")
    assert page.kind == "pdf"
    assert "Sniffed by its header." in page.text


def test_an_image_only_pdf_has_no_text() -> None:
    with pytest.raises(NoText) as caught:
        read(image_pdf(), "application/pdf")
    assert "scanned" in caught.value.message or "image" in caught.value.message


def test_a_truncated_pdf_is_our_error_not_pypdf_s() -> None:
    body = text_pdf(["Some words.", "More words."])
    for broken in (body[: len(body) // 3], body[:40], b"%PDF-1.4\n%garbage that is no pdf at all\n"):
        with pytest.raises((UnsupportedContent, NoText)) as caught:
            read(broken, "application/pdf")
        assert caught.value.url == URL


def test_a_pdf_locked_by_a_user_password_is_unsupported_and_an_owner_password_alone_is_read() -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Owner protected text.")
    pdf.set_encryption(owner_password="owner")
    assert "Owner protected text." in read(bytes(pdf.output()), "application/pdf").text
    locked = FPDF()
    locked.set_font("Helvetica", size=12)
    locked.add_page()
    locked.multi_cell(0, 8, "Secret text.")
    locked.set_encryption(owner_password="owner", user_password="user")
    with pytest.raises(UnsupportedContent) as caught:
        read(bytes(locked.output()), "application/pdf")
    assert caught.value.content_type == "application/pdf"


def test_an_error_page_sent_as_pdf_is_read_as_html() -> None:
    page = read(ARTICLE, "application/pdf")
    assert page.kind == "html"


# --- other kinds ----------------------------------------------------------------------------------


def test_json_is_pretty_printed_with_its_characters_kept() -> None:
    page = read(json.dumps({"name": "Zoë", "tags": ["a", "b"]}), "application/json")
    assert page.kind == "json"
    assert page.text == '{\n  "name": "Zoë",\n  "tags": [\n    "a",\n    "b"\n  ]\n}'


def test_json_that_does_not_parse_is_given_as_text() -> None:
    page = read('{"name": "unterminated', "application/json")
    assert page.kind == "text"
    assert page.text == '{"name": "unterminated'


def test_an_error_page_sent_as_json_is_read_as_html() -> None:
    assert read(ARTICLE, "application/json").kind == "html"


def test_json_without_a_declared_type_is_sniffed() -> None:
    assert read(b'[1, 2, {"a": null}]', None).kind == "json"


RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>River News</title><description>All about rivers</description>
<item><title>Bridge reopens</title><link>https://news.example.org/bridge</link>
<pubDate>Tue, 05 Mar 2024 08:00:00 GMT</pubDate><description>&lt;p&gt;The &lt;b&gt;old&lt;/b&gt; bridge is open again.&lt;/p&gt;</description></item>
<item><title>Mill rebuilt</title><link>https://news.example.org/mill</link><description>Work ends.</description></item>
</channel></rss>"""


def test_an_rss_feed_gives_each_item_s_title_link_date_and_summary() -> None:
    page = read(RSS, "application/rss+xml")
    assert page.kind == "xml"
    assert page.title == "River News"
    assert (
        "## Bridge reopens\nhttps://news.example.org/bridge\nTue, 05 Mar 2024 08:00:00 GMT\n\nThe old bridge is open again."
        in page.text
    )
    assert "## Mill rebuilt\nhttps://news.example.org/mill\n\nWork ends." in page.text
    assert "<p>" not in page.text


def test_a_feed_served_as_html_is_read_as_a_feed() -> None:
    assert read(RSS, "text/html").kind == "xml"


def test_an_atom_feed_takes_links_from_href() -> None:
    atom = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Log</title>'
        '<entry><title>Entry one</title><link href="https://log.example/1"/><updated>2024-01-02T00:00:00Z</updated>'
        "<summary>Short summary.</summary></entry></feed>"
    )
    page = read(atom, "application/atom+xml")
    assert "## Entry one\nhttps://log.example/1\n2024-01-02T00:00:00Z\n\nShort summary." in page.text


def test_plain_xml_gives_the_text_of_its_elements_and_no_entity_is_resolved() -> None:
    body = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r><a>one</a><b>two &x;</b></r>'
    page = read(body, "application/xml")
    assert page.kind == "xml"
    assert "one" in page.text and "two" in page.text
    assert "root:" not in page.text


def test_plain_text_and_markdown_pass_through() -> None:
    text = read("line one\r\nline two\n", "text/plain")
    assert (text.kind, text.text) == ("text", "line one\nline two")
    md = read("# Notes\n\n* a\n* b\n", "text/markdown")
    assert (md.kind, md.title, md.text) == ("markdown", "Notes", "# Notes\n\n* a\n* b")


def test_a_markdown_file_served_as_text_plain_is_markdown() -> None:
    body = b"# Readme\n\ntext"
    assert extract(body, url="https://x.example/README.md", content_type="text/plain", charset=None).kind == "markdown"


def test_other_formats_of_non_html_are_escaped_in_pre() -> None:
    assert read("a < b", "text/plain", fmt="html").text == "<pre>a &lt; b</pre>"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"PK\x03\x04\x14\x00\x00\x00", "application/zip"),
        (b"ID3\x04\x00\x00\x00\x00", "audio/mpeg"),
        (b"\x00\x01\x02\x03\x04binary", "application/octet-stream"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "text/html"),
        (b"\x00\x00\x00\x18ftypmp42", None),
    ],
)
def test_binary_types_are_unsupported_and_named(body: bytes, content_type: str | None) -> None:
    with pytest.raises(UnsupportedContent) as caught:
        read(body, content_type)
    assert caught.value.url == URL
    if content_type and content_type != "text/html":
        assert caught.value.content_type == content_type
        assert content_type in caught.value.message


def test_text_sent_as_octet_stream_is_read() -> None:
    assert read(b"just some words\n", "application/octet-stream").text == "just some words"


def test_an_empty_body_has_no_text() -> None:
    for content_type in ("text/html", "application/pdf", "text/plain", None):
        with pytest.raises(NoText):
            read(b"  \n", content_type)


def test_an_unknown_format_is_a_parameter_error() -> None:
    with pytest.raises(InvalidSearchParams) as caught:
        read("x", "text/plain", fmt="rtf")
    assert caught.value.param == "fmt"


# --- benchmark pages (only where /work/shared is present) ----------------------------------------

BENCH = Path("/work/shared/benchmarks/article-extraction")


@pytest.mark.skipif(not (BENCH / "ground-truth.json").is_file(), reason="the shared benchmark pages are not here")
def test_benchmark_pages_give_most_of_their_article() -> None:
    truth = json.loads((BENCH / "ground-truth.json").read_text())
    for key in sorted(truth)[:5]:
        html = gzip.decompress((BENCH / "html" / f"{key}.html.gz").read_bytes())
        page = extract(html, url=truth[key]["url"], content_type="text/html", charset=None, fmt="text")
        words = set(truth[key]["articleBody"].split())
        found = set(page.text.split())
        assert len(words & found) >= 0.7 * len(words), key


def test_the_extractor_s_dependencies_import() -> None:
    # jusText (which trafilatura imports) needs lxml.html.clean; lxml 6 dropped the extra that
    # brought it, and a failed import read as "no main content" on every page.
    import justext  # noqa: F401
    import trafilatura  # noqa: F401


def test_a_challenge_padded_with_blanks_of_every_kind_is_still_page_blocked() -> None:
    # The visible-text count stops early once the page has more than a challenge shows; blanks
    # (no-break spaces, returns, tabs) must not count towards that, or padding hides a challenge.
    padding = "<span>" + "\u00a0\r\t\f\v " * 800 + "</span>"
    with pytest.raises(PageBlocked):
        read(html_of(padding + '<p>Verify you are human.</p><iframe src="https://newassets.hcaptcha.com/c"></iframe>'))


def test_the_challenge_check_parses_a_page_once_for_the_hidden_text_scan_too() -> None:
    from websearch._reading import _page_text

    page = ARTICLE * 10  # long enough to be kept
    first = _page_text.parse(page)
    again = page[:5] + page[5:]
    assert again is not page and _page_text.parse(again) is first  # the same text, another string: the same tree
    other = _page_text.parse(page.replace("<p>", "<p> ", 1))
    assert other is not first and "<p> " in other.html  # other text: parsed anew
