"""Country, language and safe search, as each provider's wire takes them.

Every function here is pure: a plan's checked parameters in (country an ISO 3166-1 alpha-2 code
in upper case, language an ISO 639-1 code in lower case, safesearch off/moderate/strict), the
provider's own parameters out, with the notices of what it could apply only approximately or
not at all. A provider declares the three in its `supports`; the dynamic cases (a language
DuckDuckGo has no region for, a country Tavily has no name for) are these notices. The facts of
each engine are in docs/engines/<id>.md and docs/parameters.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .._core._notices import Notice, approximated, not_applied
from ._base import Support

if TYPE_CHECKING:
    from .._core._types import SearchParams

__all__ = [
    "accept_language",
    "bing_locale",
    "brave_locale",
    "ddg_locale",
    "google_locale",
    "mojeek_locale",
    "searxng_locale",
    "startpage_locale",
    "tavily_country",
    "yahoo_locale",
]

#: Support declarations, spread into a provider's `supports`.
LOCALE_NATIVE: Final[dict[str, Support]] = {"country": "native", "language": "native", "safesearch": "native"}

# -- Brave ------------------------------------------------------------------------------------

#: ISO 639-1 codes Brave's `search_lang` spells otherwise (Japanese is `jp`, Chinese has scripts).
_BRAVE_LANG: Final = {"ja": "jp", "zh": "zh-hans", "pt": "pt-pt"}
_BRAVE_BY_COUNTRY: Final = {
    ("zh", "TW"): "zh-hant",
    ("zh", "HK"): "zh-hant",
    ("pt", "BR"): "pt-br",
    ("en", "GB"): "en-gb",
}


def brave_locale(params: SearchParams) -> list[tuple[str, str]]:
    """Brave's `country` (upper case), `search_lang` and `safesearch` (its own three words)."""
    out = []
    if params.country:
        out.append(("country", params.country))
    if params.language:
        lang = params.language
        lang = _BRAVE_BY_COUNTRY.get((lang, params.country or ""), _BRAVE_LANG.get(lang, lang))
        out.append(("search_lang", lang))
    if params.safesearch:
        out.append(("safesearch", params.safesearch))
    return out


# -- DuckDuckGo -------------------------------------------------------------------------------

#: DuckDuckGo's regions (`kl`), `<country>-<language>` in its own spelling: the first one of a
#: country is its default. `wt-wt` is "no region".
DDG_REGIONS: Final = [
    "xa-ar",
    "xa-en",
    "ar-es",
    "au-en",
    "at-de",
    "be-fr",
    "be-nl",
    "br-pt",
    "bg-bg",
    "ca-en",
    "ca-fr",
    "ct-ca",
    "cl-es",
    "cn-zh",
    "co-es",
    "hr-hr",
    "cz-cs",
    "dk-da",
    "ee-et",
    "fi-fi",
    "fr-fr",
    "de-de",
    "gr-el",
    "hk-tzh",
    "hu-hu",
    "in-en",
    "id-id",
    "id-en",
    "ie-en",
    "il-he",
    "it-it",
    "jp-jp",
    "kr-kr",
    "lv-lv",
    "lt-lt",
    "xl-es",
    "my-ms",
    "my-en",
    "mx-es",
    "nl-nl",
    "nz-en",
    "no-no",
    "pe-es",
    "ph-en",
    "ph-tl",
    "pl-pl",
    "pt-pt",
    "ro-ro",
    "ru-ru",
    "sg-en",
    "sk-sk",
    "sl-sl",
    "za-en",
    "es-es",
    "se-sv",
    "ch-de",
    "ch-fr",
    "ch-it",
    "tw-tzh",
    "th-th",
    "tr-tr",
    "ua-uk",
    "uk-en",
    "us-en",
    "us-es",
    "ve-es",
    "vn-vi",
]
#: ISO countries DuckDuckGo spells otherwise (GB is `uk`, Slovenia `sl`).
_DDG_COUNTRY: Final = {"gb": "uk", "si": "sl"}
#: DuckDuckGo's region languages that are not ISO 639-1 codes.
_DDG_LANGUAGE: Final = {"tzh": "zh", "jp": "ja", "kr": "ko", "sl": "sl"}
DDG_SAFE: Final = {"strict": "1", "moderate": "-1", "off": "-2"}


def ddg_locale(params: SearchParams, label: str) -> tuple[dict[str, str], list[Notice]]:
    """DuckDuckGo's `kl` region and `kp` safe search. A region pairs a country with one of its
    languages: the country's region in the language asked for when DuckDuckGo has it, else the
    country's default region (the language noted as not applied); a language alone is no region
    (`wt-wt`), and is noted as not applied."""
    out: dict[str, str] = {}
    notices: list[Notice] = []
    country, language = params.country, params.language
    if country:
        cc = country.lower()
        cc = _DDG_COUNTRY.get(cc, cc)
        regions = [r for r in DDG_REGIONS if r.split("-")[0] == cc]
        matching = [r for r in regions if _ddg_language(r) == language]
        if matching or regions:
            out["kl"] = (matching or regions)[0]
            if language and not matching:
                why = f"{label}'s region {out['kl']} has its own language"
                notices.append(not_applied("language", language, why))
        else:
            notices.append(not_applied("country", country, f"{label} has no region for it"))
            if language:
                notices.append(not_applied("language", language, f"{label} takes a language only with a region"))
    elif language:
        out["kl"] = "wt-wt"  # no region: a language never sets a country
        notices.append(not_applied("language", language, f"{label} takes a language only with a country's region"))
    if params.safesearch:
        out["kp"] = DDG_SAFE[params.safesearch]
    return out, notices


def _ddg_language(region: str) -> str:
    code = region.split("-")[1]
    return _DDG_LANGUAGE.get(code, code)


# -- Bing, Google, Mojeek, Startpage ------------------------------------------------------------


def country_language(country: str) -> str | None:
    """The first language of `country`'s DuckDuckGo regions (its main one), or None."""
    cc = _DDG_COUNTRY.get(country.lower(), country.lower())
    return next((_ddg_language(r) for r in DDG_REGIONS if r.split("-")[0] == cc), None)


def bing_locale(params: SearchParams, label: str) -> tuple[dict[str, str], dict[str, str], list[Notice]]:
    """Bing's page: `cc` (its region) and the market `mkt` (`de-DE`: the language asked, else the
    country's own) with an Accept-Language that agrees with it (Bing answers unrelated results when
    they differ); `setlang` (its interface language, which also ranks results in it); `adlt`
    (off/moderate/strict). A language alone keeps the en-US market: it is approximated by
    `setlang`. Parameters, headers, notices."""
    out: dict[str, str] = {}
    headers: dict[str, str] = {}
    notices: list[Notice] = []
    country, language = params.country, params.language
    if country:
        lang = language or country_language(country) or "en"
        out["cc"] = country.lower()
        out["mkt"] = f"{lang}-{country}"
        headers["Accept-Language"] = f"{lang}-{country},{lang};q=0.9"
    if language:
        out["setlang"] = language
        if not country:
            why = f"{label}'s market (its results' region and language) needs a country"
            notices.append(approximated("language", language, f"setlang={language} (the interface language)", why))
    if params.safesearch:
        out["adlt"] = params.safesearch
    return out, headers, notices


GOOGLE_SAFE: Final = {"strict": "active", "off": "off"}


def google_locale(params: SearchParams) -> dict[str, str]:
    """Google's `gl` (country boost), `hl` (interface language, which also ranks results in it) and
    `safe` (active or off; moderate is Google's default filter, nothing sent)."""
    out: dict[str, str] = {}
    if params.country:
        out["gl"] = params.country.lower()
    if params.language:
        out["hl"] = params.language
    if params.safesearch in GOOGLE_SAFE:
        out["safe"] = GOOGLE_SAFE[params.safesearch]
    return out


def mojeek_locale(params: SearchParams, label: str) -> tuple[dict[str, str], str | None, list[Notice]]:
    """Mojeek's `safe` (0 or 1: moderate is its one filter, strict approximated by it) and its
    preference cookies `arc` (region) and `lb` (language), as the Cookie header (None: unchanged)."""
    out: dict[str, str] = {}
    notices: list[Notice] = []
    if params.safesearch:
        out["safe"] = "0" if params.safesearch == "off" else "1"
        if params.safesearch == "strict":
            notices.append(approximated("safesearch", "strict", "safe=1", f"{label} has one filter, on or off"))
    cookie = None
    if params.country or params.language:
        cookie = f"arc={(params.country or 'us').lower()}; lb={params.language or 'en'}"
    return out, cookie, notices


#: ISO 639-1 codes as Startpage's `language` / `lui` names them.
STARTPAGE_LANGUAGES: Final = {
    "en": "english",
    "de": "deutsch",
    "fr": "francais",
    "es": "espanol",
    "it": "italiano",
    "nl": "nederlands",
    "pt": "portugues",
    "da": "dansk",
    "sv": "svenska",
    "no": "norsk",
    "nb": "norsk",
    "fi": "suomi",
    "pl": "polski",
    "ja": "nihongo",
    "ko": "hangul",
    "zh": "jiantizhongwen",
}
STARTPAGE_SAFE: Final = {"off": "none", "moderate": "moderate", "strict": "heavy"}


def startpage_locale(params: SearchParams, label: str) -> tuple[dict[str, str], list[Notice]]:
    """Startpage's `language` and `lui` (its language names), `qsr` (the results region, as
    `<lang>_<COUNTRY>`) and `qadf` (its family filter: none, moderate, heavy)."""
    out: dict[str, str] = {}
    notices: list[Notice] = []
    if params.language:
        name = STARTPAGE_LANGUAGES.get(params.language)
        if name is None:
            notices.append(not_applied("language", params.language, f"{label} has no such search language"))
        else:
            out["language"] = out["lui"] = name
    if params.country:
        out["qsr"] = f"{params.language or 'en'}_{params.country}"
    if params.safesearch:
        out["qadf"] = STARTPAGE_SAFE[params.safesearch]
    return out, notices


YAHOO_SAFE: Final = {"off": "p", "moderate": "i", "strict": "r"}
#: ISO 639-1 codes Yahoo's language filter spells otherwise.
_YAHOO_LANG: Final = {"zh": "zh_chs"}


def yahoo_locale(params: SearchParams) -> str | None:
    """Yahoo's `sB` preference cookie: `vm` (safe search p/i/r) and `vl=lang_<xx>` (results in
    that language only; sent only when a language is asked); None when neither is set. The
    country is not sent (Yahoo's regional hosts are not used)."""
    prefs = [("v", "1")]
    if params.safesearch:
        prefs.append(("vm", YAHOO_SAFE[params.safesearch]))
    if params.language:
        prefs += [("fl", "1"), ("vl", f"lang_{_YAHOO_LANG.get(params.language, params.language)}")]
    return f"sB={'&'.join(f'{k}={v}' for k, v in prefs)}" if len(prefs) > 1 else None


def accept_language(params: SearchParams, label: str) -> tuple[str | None, list[Notice]]:
    """An Accept-Language for an engine that takes its market from it (Ecosia without its settings
    cookie): `de-DE,de;q=0.9` (the language asked, else the country's own), or a language alone;
    approximated, with notices (None when neither is set)."""
    country, language = params.country, params.language
    if not country and not language:
        return None, []
    lang = language or (country_language(country) if country else None) or "en"
    header = f"{lang}-{country},{lang};q=0.9" if country else f"{lang},en;q=0.5"
    why = f"{label} takes its market from the browser's languages"
    notices = [
        approximated(name, getattr(params, name), f"Accept-Language: {header}", why)
        for name in ("country", "language")
        if getattr(params, name)
    ]
    return header, notices


# -- SearXNG, Tavily --------------------------------------------------------------------------


SEARXNG_SAFE: Final = {"off": "0", "moderate": "1", "strict": "2"}


def searxng_locale(
    params: SearchParams, configured: str | None, label: str
) -> tuple[list[tuple[str, str]], list[Notice]]:
    """SearXNG's `language` and `safesearch` (0, 1, 2). The language is a locale (`de-DE`) with
    a country, the language alone without; a country alone goes with the language of the
    `[searxng] language` setting (the provider's own default, which holds when nothing is given)
    when that is a plain language, and is not applied otherwise (SearXNG has no country alone)."""
    out: list[tuple[str, str]] = []
    notices: list[Notice] = []
    language, country = params.language, params.country
    base = configured.split("-")[0].lower() if configured else ""
    if country and not language and not (len(base) == 2 and base.isalpha()):
        notices.append(not_applied("country", country, f"{label} takes a country only with a language"))
        country = None
    if country:
        out.append(("language", f"{language or base}-{country}"))
    elif language:
        out.append(("language", language))
    elif configured:
        out.append(("language", configured))
    if params.safesearch:
        out.append(("safesearch", SEARXNG_SAFE[params.safesearch]))
    return out, notices


#: ISO 3166-1 alpha-2 codes as the country names Tavily's `country` takes (lower case): the 166 of
#: its API reference's list ("congo" is the Republic of the Congo; the Democratic Republic has none).
TAVILY_COUNTRIES: Final = {
    "AF": "afghanistan", "AL": "albania", "DZ": "algeria", "AD": "andorra", "AO": "angola", "AR": "argentina",
    "AM": "armenia", "AU": "australia", "AT": "austria", "AZ": "azerbaijan", "BS": "bahamas", "BH": "bahrain",
    "BD": "bangladesh", "BB": "barbados", "BY": "belarus", "BE": "belgium", "BZ": "belize", "BJ": "benin",
    "BT": "bhutan", "BO": "bolivia", "BA": "bosnia and herzegovina", "BW": "botswana", "BR": "brazil",
    "BN": "brunei", "BG": "bulgaria", "BF": "burkina faso", "BI": "burundi", "KH": "cambodia", "CM": "cameroon",
    "CA": "canada", "CV": "cape verde", "CF": "central african republic", "TD": "chad", "CL": "chile",
    "CN": "china", "CO": "colombia", "KM": "comoros", "CG": "congo", "CR": "costa rica", "HR": "croatia",
    "CU": "cuba", "CY": "cyprus", "CZ": "czech republic", "DK": "denmark", "DJ": "djibouti",
    "DO": "dominican republic", "EC": "ecuador", "EG": "egypt", "SV": "el salvador", "GQ": "equatorial guinea",
    "ER": "eritrea", "EE": "estonia", "ET": "ethiopia", "FJ": "fiji", "FI": "finland", "FR": "france",
    "GA": "gabon", "GM": "gambia", "GE": "georgia", "DE": "germany", "GH": "ghana", "GR": "greece",
    "GT": "guatemala", "GN": "guinea", "HT": "haiti", "HN": "honduras", "HU": "hungary", "IS": "iceland",
    "IN": "india", "ID": "indonesia", "IR": "iran", "IQ": "iraq", "IE": "ireland", "IL": "israel", "IT": "italy",
    "JM": "jamaica", "JP": "japan", "JO": "jordan", "KZ": "kazakhstan", "KE": "kenya", "KW": "kuwait",
    "KG": "kyrgyzstan", "LV": "latvia", "LB": "lebanon", "LS": "lesotho", "LR": "liberia", "LY": "libya",
    "LI": "liechtenstein", "LT": "lithuania", "LU": "luxembourg", "MG": "madagascar", "MW": "malawi",
    "MY": "malaysia", "MV": "maldives", "ML": "mali", "MT": "malta", "MR": "mauritania", "MU": "mauritius",
    "MX": "mexico", "MD": "moldova", "MC": "monaco", "MN": "mongolia", "ME": "montenegro", "MA": "morocco",
    "MZ": "mozambique", "MM": "myanmar", "NA": "namibia", "NP": "nepal", "NL": "netherlands", "NZ": "new zealand",
    "NI": "nicaragua", "NE": "niger", "NG": "nigeria", "KP": "north korea", "MK": "north macedonia", "NO": "norway",
    "OM": "oman", "PK": "pakistan", "PA": "panama", "PG": "papua new guinea", "PY": "paraguay", "PE": "peru",
    "PH": "philippines", "PL": "poland", "PT": "portugal", "QA": "qatar", "RO": "romania", "RU": "russia",
    "RW": "rwanda", "SA": "saudi arabia", "SN": "senegal", "RS": "serbia", "SG": "singapore", "SK": "slovakia",
    "SI": "slovenia", "SO": "somalia", "ZA": "south africa", "KR": "south korea", "SS": "south sudan",
    "ES": "spain", "LK": "sri lanka", "SD": "sudan", "SE": "sweden", "CH": "switzerland", "SY": "syria",
    "TW": "taiwan", "TJ": "tajikistan", "TZ": "tanzania", "TH": "thailand", "TG": "togo",
    "TT": "trinidad and tobago", "TN": "tunisia", "TR": "turkey", "TM": "turkmenistan", "UG": "uganda",
    "UA": "ukraine", "AE": "united arab emirates", "GB": "united kingdom", "US": "united states", "UY": "uruguay",
    "UZ": "uzbekistan", "VE": "venezuela", "VN": "vietnam", "YE": "yemen", "ZM": "zambia", "ZW": "zimbabwe",
}  # fmt: skip


def tavily_country(params: SearchParams, label: str) -> tuple[str | None, list[Notice]]:
    """Tavily's `country` (a full country name), or the notice that it has none for the code."""
    if not params.country:
        return None, []
    name = TAVILY_COUNTRIES.get(params.country)
    if name is None:
        return None, [not_applied("country", params.country, f"{label} has no such country")]
    return name, []
