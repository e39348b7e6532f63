"""Country, language and safe search: checked once, defaulted from settings, mapped by each provider
onto its own wire (checked at each provider's loopback fake), recorded in the response, and taken
by every face (library, CLI, MCP, REST, the SearXNG-compatible /search)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FakeClock, key_env, make_client, messages, run_cli
from serve_helper import TOKEN, InProcess, http
from websearch import SearchParams, SearchResponse
from websearch._core._clock import SystemClock
from websearch._core._settings import Settings
from websearch._core._types import Locale, LocaleValue
from websearch._faces._rendering import render
from websearch._faces._tool import parse_arguments
from websearch._state import MemoryStore
from websearch.errors import ConfigError, InvalidSearchParams
from websearch.testing import FAKES, FakeDuckDuckGo, RecordedRequest

KEY = "test-key-locale-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


# -- the parameters ---------------------------------------------------------------------------


def test_codes_are_normalised_country_upper_language_lower() -> None:
    params = SearchParams("q", country=" de", language="EN", safesearch="strict")
    assert (params.country, params.language, params.safesearch) == ("DE", "en", "strict")
    assert params.given() == {"country": "DE", "language": "en", "safesearch": "strict"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "country",
            "deu",
            'country must be two letters, an ISO 3166-1 alpha-2 country code such as DE or us; got "deu"',
        ),
        ("country", "d1", 'country must be two letters, an ISO 3166-1 alpha-2 country code such as DE or us; got "d1"'),
        ("country", "ää", 'country must be two letters, an ISO 3166-1 alpha-2 country code such as DE or us; got "ää"'),
        ("country", 49, "country must be two letters, an ISO 3166-1 alpha-2 country code such as DE or us; got 49"),
        ("language", "deu", 'language must be two letters, an ISO 639-1 language code such as de or EN; got "deu"'),
        ("language", "", 'language must be two letters, an ISO 639-1 language code such as de or EN; got ""'),
        ("safesearch", "on", 'safesearch must be one of: moderate, off, strict; got "on"'),
    ],
)
def test_refusals_name_the_parameter_and_what_it_takes(field: str, value: Any, message: str) -> None:
    with pytest.raises(InvalidSearchParams) as info:
        SearchParams("q", **{field: value})
    assert (info.value.param, info.value.message) == (field, message)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('country = "Germany"', "setting search.country must be two letters"),
        ('language = "deu"', "setting search.language must be two letters"),
        ('safesearch = "on"', "setting search.safesearch must be one of: moderate, off, strict"),
    ],
)
def test_a_bad_setting_fails_when_the_settings_are_read(tmp_path: Path, setting: str, message: str) -> None:
    (tmp_path / "settings.toml").write_text(f"[search]\n{setting}\n")
    with pytest.raises(ConfigError, match=message):
        Settings.load(tmp_path, {})


# -- precedence and the record ------------------------------------------------------------------


def settings(config_dir: Path, **values: str) -> None:
    lines = "".join(f'{name} = "{value}"\n' for name, value in values.items())
    (config_dir / "settings.toml").write_text(f"[search]\n{lines}")


async def ddg_search(env: dict[str, str], **params: Any) -> SearchResponse:
    async with make_client(env=env, clock=FakeClock()) as ws:
        return await ws.asearch("rust async", provider="duckduckgo", **params)


async def test_nothing_set_sends_the_engine_defaults_and_records_nothing(
    ddg: FakeDuckDuckGo, env: dict[str, str]
) -> None:
    response = await ddg_search(env)
    form = dict(ddg.last.form())
    assert (form["kl"], "kp" in form) == ("us-en", False)
    assert response.locale is None and response.to_dict()["locale"] is None
    assert "[locale:" not in render(response, "blocks")


async def test_the_argument_wins_over_the_setting_which_wins_over_the_default(
    ddg: FakeDuckDuckGo, env: dict[str, str], config_dir: Path
) -> None:
    settings(config_dir, country="FR", safesearch="moderate")
    response = await ddg_search(env, country="ch", language="fr")
    form = dict(ddg.last.form())
    assert (form["kl"], form["kp"]) == ("ch-fr", "-1")
    assert response.locale == Locale(
        LocaleValue("CH", "argument", True),
        LocaleValue("fr", "argument", True),
        LocaleValue("moderate", "setting", True),
    )
    assert response.to_dict()["locale"]["safesearch"] == {"value": "moderate", "source": "setting", "applied": True}
    assert "[locale: country=CH, language=fr, safesearch=moderate (setting)]" in render(response, "blocks")

    response = await ddg_search(env)  # the settings alone
    assert dict(ddg.last.form())["kl"] == "fr-fr"
    assert response.locale == Locale(
        LocaleValue("FR", "setting", True), LocaleValue(None, "default"), LocaleValue("moderate", "setting", True)
    )


async def test_blank_strings_from_strict_agents_are_not_given(
    ddg: FakeDuckDuckGo, env: dict[str, str], config_dir: Path
) -> None:
    settings(config_dir, country="DE")
    response = await ddg_search(env, country="", language=" ", safesearch=None)
    assert dict(ddg.last.form())["kl"] == "de-de"
    assert response.locale is not None and response.locale.country == LocaleValue("DE", "setting", True)


async def test_a_language_alone_never_sets_a_country(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    response = await ddg_search(env, language="de")
    assert dict(ddg.last.form())["kl"] == "wt-wt"  # no region, not Germany's
    assert messages(response) == (
        'language="de" not applied: DuckDuckGo takes a language only with a country\'s region',
    )
    assert response.locale == Locale(
        LocaleValue(None, "default"), LocaleValue("de", "argument", False), LocaleValue(None, "default")
    )
    assert "[locale: language=de (not applied)]" in render(response, "blocks")


async def test_a_setting_the_provider_cannot_apply_is_recorded_not_noticed(
    ddg: FakeDuckDuckGo, env: dict[str, str], config_dir: Path
) -> None:
    """A standing default (here a language DuckDuckGo cannot take without a country) would say
    the same notice on every search: the record says it instead."""
    settings(config_dir, language="de")
    response = await ddg_search(env)
    assert messages(response) == ()
    assert [n for a in response.attempts for n in a.notices if n.param == "language"] == []  # nor in the attempts
    assert response.locale is not None and response.locale.language == LocaleValue("de", "setting", False)
    assert "[locale: language=de (setting, not applied)]" in render(response, "blocks")
    # the same value as an argument is the caller's own request: it gets its notice
    response = await ddg_search(env, language="de")
    assert len(messages(response)) == 1 and response.locale.language == LocaleValue("de", "argument", False)


async def test_a_provider_without_a_locale_says_it_did_not_apply_it(env: dict[str, str], config_dir: Path) -> None:
    with FAKES["jina"]() as fake:
        env = {**key_env("jina", config_dir, KEY), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("rust", provider="jina", country="DE", safesearch="strict")
    assert response.ok
    assert messages(response) == (
        'country="DE" not applied: Jina does not support it',
        'safesearch="strict" not applied: Jina does not support it',
    )
    assert response.locale is not None
    assert (response.locale.country.applied, response.locale.safesearch.applied) == (False, False)


async def test_the_same_search_is_one_cache_entry_whatever_its_country_came_from(
    ddg: FakeDuckDuckGo, env: dict[str, str], config_dir: Path
) -> None:
    settings(config_dir, country="DE")
    async with make_client(env=env, clock=FakeClock(), engine=True, store=MemoryStore(SystemClock())) as ws:
        first = await ws.asearch("rust", provider="duckduckgo")
        second = await ws.asearch("rust", provider="duckduckgo", country="de")
        other = await ws.asearch("rust", provider="duckduckgo", country="FR")
    assert (first.cached, second.cached, other.cached) == (False, True, False)
    assert first.locale is not None and first.locale.country.source == "setting"
    assert second.locale is not None and second.locale.country.source == "argument"
    assert len(ddg.requests) == 2


# -- each provider's wire -------------------------------------------------------------------------


def _wire(request: RecordedRequest) -> dict[str, Any]:
    """What a fake received, as one flat mapping: the query string, the form, the JSON body and
    the headers that carry a locale."""
    seen: dict[str, Any] = dict(request.query)
    if request.body:
        try:
            seen.update(request.json())
        except ValueError:
            seen.update(request.form())
    seen.update({name: request.headers[name] for name in ("cookie", "accept-language") if name in request.headers})
    return seen


#: Per provider: the parameters given, then what its fake must have received.
WIRE: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "brave": (
        {"country": "de", "language": "de", "safesearch": "strict"},
        {"country": "DE", "search_lang": "de", "safesearch": "strict"},
    ),
    "duckduckgo": ({"country": "GB", "safesearch": "off"}, {"kl": "uk-en", "kp": "-2"}),
    "bing": (
        {"country": "DE", "language": "de", "safesearch": "strict"},
        {"cc": "de", "mkt": "de-DE", "setlang": "de", "adlt": "strict", "accept-language": "de-DE,de;q=0.9"},
    ),
    "google": ({"country": "DE", "language": "de", "safesearch": "strict"}, {"gl": "de", "hl": "de", "safe": "active"}),
    "startpage": (
        {"country": "DE", "language": "de", "safesearch": "off"},
        {"language": "deutsch", "lui": "deutsch", "qsr": "de_DE", "qadf": "none"},
    ),
    "mojeek": ({"country": "DE", "language": "de", "safesearch": "moderate"}, {"safe": "1", "cookie": "arc=de; lb=de"}),
    "searxng": (
        {"country": "AT", "language": "de", "safesearch": "moderate"},
        {"language": "de-AT", "safesearch": "1"},
    ),
    "tavily": ({"country": "DE"}, {"country": "germany"}),
    "serper": ({"country": "DE", "language": "de"}, {"gl": "de", "hl": "de"}),
    "exa": ({"country": "DE"}, {"userLocation": "DE"}),
    "yahoo": ({"language": "de", "safesearch": "strict"}, {"cookie": "sB=v=1&vm=r&fl=1&vl=lang_de"}),
    "ecosia": ({"country": "AT"}, {"accept-language": "de-AT,de;q=0.9"}),
    "perplexity": (
        {"country": "DE", "language": "de"},
        {
            "web_search_options": {
                "search_type": "pro",
                "search_context_size": "high",
                "user_location": {"country": "DE"},
            },
            "search_language_filter": ["de"],
        },
    ),
}


@pytest.mark.parametrize("provider", WIRE)
async def test_each_provider_sends_the_locale_as_its_wire_takes_it(provider: str, config_dir: Path) -> None:
    given, expected = WIRE[provider]
    with FAKES[provider]() as fake:
        env = {**key_env(provider, config_dir, KEY), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            response = await ws.asearch("rust async runtime", provider=provider, **given)
        seen = _wire(fake.requests[0])
    assert response.ok, response.error
    assert {name: seen.get(name) for name in expected} == expected
    assert response.locale is not None
    assert all(getattr(response.locale, name).applied for name in given), response.notices


async def test_searxng_keeps_its_own_language_setting_as_the_default(config_dir: Path) -> None:
    (config_dir / "settings.toml").write_text('[searxng]\nlanguage = "fr"\n')
    with FAKES["searxng"]() as fake:
        env = {**key_env("searxng", config_dir, KEY), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            plain = await ws.asearch("q", provider="searxng")
            plain_language = fake.last.args.get("language")
            country = await ws.asearch("q", provider="searxng", country="CH")
            country_language = fake.last.args.get("language")
            language = await ws.asearch("q", provider="searxng", language="it")
            language_language = fake.last.args.get("language")
    assert (plain_language, country_language, language_language) == ("fr", "fr-CH", "it")
    assert plain.ok and country.ok and language.ok
    assert not [n for n in country.notices if n.param == "country"]


async def test_tavily_takes_every_country_of_its_list_by_its_name(config_dir: Path) -> None:
    from websearch._providers._locale import TAVILY_COUNTRIES

    assert len(TAVILY_COUNTRIES) == 166 and len(set(TAVILY_COUNTRIES.values())) == 166
    with FAKES["tavily"]() as fake:
        env = {**key_env("tavily", config_dir, KEY), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            mongolia = await ws.asearch("q", provider="tavily", country="MN")
            congo = await ws.asearch("q", provider="tavily", country="CG")
            drc = await ws.asearch("q", provider="tavily", country="CD")
        bodies = [r.json() for r in fake.requests]
    assert [b.get("country") for b in bodies] == ["mongolia", "congo", None]
    assert mongolia.ok and congo.ok and not [n for n in (*mongolia.notices, *congo.notices) if n.param == "country"]
    assert messages(drc) == ('country="CD" not applied: Tavily has no such country',)


async def test_what_a_provider_maps_only_in_part_gets_its_notice(config_dir: Path) -> None:
    with FAKES["tavily"]() as fake:
        env = {**key_env("tavily", config_dir, KEY), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            unknown = await ws.asearch("q", provider="tavily", country="XK")
            news = await ws.asearch("q", provider="tavily", country="DE", category="news")
        bodies = [r.json() for r in fake.requests]
    assert "country" not in bodies[0] and "country" not in bodies[1]
    assert messages(unknown) == ('country="XK" not applied: Tavily has no such country',)
    assert 'country="DE" not applied: Tavily boosts a country in general searches only' in messages(news)
    with FAKES["bing"]() as fake:
        env = {**key_env("bing", config_dir, KEY), **fake.env}
        async with make_client(env=env, clock=FakeClock()) as ws:
            alone = await ws.asearch("q", provider="bing", language="de")
        seen = _wire(fake.requests[0])
    assert (seen["mkt"], seen["setlang"]) == ("en-US", "de")  # the market keeps its default: no country
    assert messages(alone)[0].startswith('language="de" applied as setlang=de (the interface language)')


# -- the mappings, one value at a time ---------------------------------------------------------------


def test_the_mappings_of_values_a_wire_has_no_word_for() -> None:
    from websearch._providers import _locale as wire

    assert wire.google_locale(SearchParams("q", safesearch="moderate")) == {}  # Google's own default filter
    assert wire.google_locale(SearchParams("q", safesearch="off")) == {"safe": "off"}
    pairs, cookie, notices = wire.mojeek_locale(SearchParams("q", safesearch="strict"), "Mojeek")
    assert (pairs, cookie) == ({"safe": "1"}, None)
    assert [n.message for n in notices] == ['safesearch="strict" applied as safe=1: Mojeek has one filter, on or off']
    pairs, notices = wire.startpage_locale(SearchParams("q", language="yo"), "Startpage")
    assert pairs == {} and [n.kind for n in notices] == ["not_applied"]
    pairs, notices = wire.startpage_locale(SearchParams("q", country="CH", language="it"), "Startpage")
    assert (pairs, notices) == ({"language": "italiano", "lui": "italiano", "qsr": "it_CH"}, [])
    pairs, notices = wire.startpage_locale(SearchParams("q", country="GB", language="fr"), "Startpage")
    assert (pairs, notices) == ({"language": "francais", "lui": "francais", "qsr": "en-GB_GB"}, [])
    pairs, notices = wire.startpage_locale(SearchParams("q", country="TW", language="zh"), "Startpage")
    assert pairs == {"language": "fantizhengwen", "lui": "fantizhengwen", "qsr": "zh-TW_TW"}
    pairs, notices = wire.startpage_locale(SearchParams("q", country="IL"), "Startpage")
    assert pairs == {} and [n.message for n in notices] == [
        'country="IL" not applied: Startpage has no results region for it'
    ]
    pairs, notices = wire.ddg_locale(SearchParams("q", country="NO", language="nb"), "DuckDuckGo")
    assert (pairs, notices) == ({"kl": "no-no"}, [])
    pairs, notices = wire.ddg_locale(SearchParams("q", country="SA"), "DuckDuckGo")
    assert (pairs, notices) == ({"kl": "xa-ar"}, [])
    pairs, notices = wire.ddg_locale(SearchParams("q", country="IL", language="he"), "DuckDuckGo")
    assert pairs == {"kl": "il-en"}  # DuckDuckGo's one Israeli region is in English
    assert wire.country_language("IL") == "he"  # whatever DuckDuckGo's region: Bing's market is he-IL
    pairs, notices = wire.ddg_locale(SearchParams("q", country="DE", language="fr"), "DuckDuckGo")
    assert pairs == {"kl": "de-de"}
    assert [n.message for n in notices] == [
        'language="fr" not applied: DuckDuckGo\'s region de-de has its own language'
    ]
    pairs, notices = wire.ddg_locale(SearchParams("q", country="AQ"), "DuckDuckGo")
    assert pairs == {} and [n.param for n in notices] == ["country"]
    located, notices = wire.searxng_locale(SearchParams("q", country="DE"), None, "SearXNG")
    assert located == [] and [n.param for n in notices] == ["country"]
    assert wire.brave_locale(SearchParams("q", country="BR", language="pt")) == [
        ("country", "BR"),
        ("search_lang", "pt-br"),
    ]
    assert wire.brave_locale(SearchParams("q", language="ja")) == [("search_lang", "jp")]
    assert wire.yahoo_locale(SearchParams("q", country="DE")) is None  # no regional host: nothing sent


# -- the faces -------------------------------------------------------------------------------------


def test_the_mcp_tool_takes_them_and_a_strict_agents_blank_means_not_given() -> None:
    call = parse_arguments({"query": "q", "country": "de", "language": "DE", "safesearch": "off"}, ["duckduckgo"])
    assert {k: call.params[k] for k in ("country", "language", "safesearch")} == {
        "country": "DE",
        "language": "de",
        "safesearch": "off",
    }
    blank = parse_arguments({"query": "q", "country": "", "language": None}, ["duckduckgo"])
    assert "country" not in blank.params and "language" not in blank.params
    with pytest.raises(InvalidSearchParams, match=r'country must be two letters.*; got "Germany"'):
        parse_arguments({"query": "q", "country": "Germany"}, ["duckduckgo"])


async def test_the_mcp_server_applies_them_and_says_so(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    from mcp import Client

    from websearch._faces._mcp_server import build_server

    async with make_client(env=env, clock=FakeClock()) as ws, Client(build_server(ws)) as client:
        result = await client.call_tool(
            "web_search", {"query": "q", "country": "ch", "language": "fr", "safesearch": ""}
        )
    assert result.is_error is False
    text = str(result.content[0].text)
    assert "[locale: country=CH, language=fr]" in text
    form = dict(ddg.last.form())
    assert (form["kl"], "kp" in form) == ("ch-fr", False)


def test_the_command_line_takes_them(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    done = run_cli(
        ["search", "rust", "--provider", "duckduckgo", "--country", "de", "--safesearch", "strict", "--format", "json"],
        env,
    )
    assert done.returncode == 0, done.stderr
    locale = json.loads(done.stdout)["response"]["locale"]
    assert locale["country"] == {"value": "DE", "source": "argument", "applied": True}
    assert dict(ddg.last.form())["kp"] == "1"
    bad = run_cli(["search", "rust", "--country", "deu"], env)
    assert bad.returncode == 2 and "country must be two letters" in bad.stderr


def test_rest_and_the_searxng_face_apply_them(ddg: FakeDuckDuckGo, env: dict[str, str]) -> None:
    with InProcess(make_client(env=env, store=MemoryStore(SystemClock()))) as server, http(server.url) as client:
        rest = client.post("/v1/search", json={"query": "rest", "country": "de", "safesearch": "strict"}, headers=AUTH)
        rest_form = dict(ddg.last.form())
        searx = client.get("/search", params={"q": "sx", "language": "fr-CH", "safesearch": "0"}, headers=AUTH)
        searx_form = dict(ddg.last.form())
        plain = client.get("/search", params={"q": "plain", "language": "auto"}, headers=AUTH)
        plain_form = dict(ddg.last.form())
        bad = client.get("/search", params={"q": "bad", "language": "klingon"}, headers=AUTH)
        config = client.get("/config", headers=AUTH).json()
    assert rest.status_code == 200, rest.text
    assert (rest_form["kl"], rest_form["kp"]) == ("de-de", "1")
    assert searx.status_code == 200 and (searx_form["kl"], searx_form["kp"]) == ("ch-fr", "-2")
    assert plain.status_code == 200 and (plain_form["kl"], "kp" in plain_form) == ("us-en", False)
    assert bad.status_code == 400 and bad.json()["error"] == 'Invalid value "klingon" for parameter language'
    engine = next(e for e in config["engines"] if e["name"] == "duckduckgo")
    assert (engine["language_support"], engine["safesearch"]) == (True, True)
