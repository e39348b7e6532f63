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

#: DuckDuckGo's regions (`kl`), `<country>-<language>` in its own spelling, as its site lists
#: them today (SearXNG's engine data, read from DuckDuckGo's own script): the first one of a
#: country is its default. `wt-wt` is "no region". Its help page's older list had regions it no
#: longer takes (`il-he`, `th-th`, `vn-vi`, `ch-it`...), which it ignores.
DDG_REGIONS: Final = [
    "xa-ar",
    "ar-es",
    "au-en",
    "at-de",
    "be-fr",
    "be-nl",
    "br-pt",
    "bg-bg",
    "ca-en",
    "ca-fr",
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
    "is-is",
    "in-en",
    "id-en",
    "ie-en",
    "il-en",
    "it-it",
    "jp-jp",
    "kr-kr",
    "lv-lv",
    "lt-lt",
    "my-en",
    "mx-es",
    "nl-nl",
    "nz-en",
    "no-no",
    "pk-en",
    "pe-es",
    "ph-en",
    "pl-pl",
    "pt-pt",
    "ro-ro",
    "ru-ru",
    "sg-en",
    "sk-sk",
    "sl-sl",
    "za-en",
    "es-es",
    "es-ca",
    "se-sv",
    "ch-de",
    "ch-fr",
    "tw-tzh",
    "th-en",
    "tr-tr",
    "ua-uk",
    "uk-en",
    "us-en",
    "us-es",
    "vn-en",
]
#: ISO countries DuckDuckGo spells otherwise (GB is `uk`, Slovenia `sl`, Saudi Arabia `xa`).
_DDG_COUNTRY: Final = {"gb": "uk", "si": "sl", "sa": "xa"}
#: DuckDuckGo's region languages that are not ISO 639-1 codes.
_DDG_LANGUAGE: Final = {"tzh": "zh", "jp": "ja", "kr": "ko", "sl": "sl"}
#: ISO 639-1 codes of the same language (Norwegian Bokmål is DuckDuckGo's `no`).
_SAME_LANGUAGE: Final = {"nb": "no"}
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
        asked = _SAME_LANGUAGE.get(language or "", language)
        matching = [r for r in regions if _ddg_language(r) == asked]
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


#: Each country's main language (ISO 639-1), for an engine that names a market by a language and
#: a country when only the country is given.
MAIN_LANGUAGE: Final = {
    "AE": "ar", "AR": "es", "AT": "de", "AU": "en", "BE": "fr", "BG": "bg", "BR": "pt", "BY": "ru",
    "CA": "en", "CH": "de", "CL": "es", "CN": "zh", "CO": "es", "CZ": "cs", "DE": "de", "DK": "da",
    "EE": "et", "EG": "ar", "ES": "es", "FI": "fi", "FR": "fr", "GB": "en", "GR": "el", "HK": "zh",
    "HR": "hr", "HU": "hu", "ID": "id", "IE": "en", "IL": "he", "IN": "en", "IS": "is", "IT": "it",
    "JP": "ja", "KR": "ko", "LT": "lt", "LV": "lv", "MX": "es", "MY": "ms", "NL": "nl", "NO": "no",
    "NZ": "en", "PE": "es", "PH": "en", "PK": "en", "PL": "pl", "PT": "pt", "RO": "ro", "RU": "ru",
    "SA": "ar", "SE": "sv", "SG": "en", "SI": "sl", "SK": "sk", "TH": "th", "TR": "tr", "TW": "zh",
    "UA": "uk", "US": "en", "UY": "es", "VE": "es", "VN": "vi", "ZA": "en",
}  # fmt: skip


def country_language(country: str) -> str | None:
    """`country`'s main language, or None."""
    return MAIN_LANGUAGE.get(country.upper())


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


#: ISO 639-1 codes as Startpage's `language` / `lui` names them (SearXNG's engine data, read from
#: Startpage's settings page); Chinese and Portuguese by country below.
STARTPAGE_LANGUAGES: Final = {
    "af": "afrikaans", "am": "amharic", "ar": "arabic", "az": "azerbaijani", "be": "belarusian",
    "bg": "bulgarian", "bn": "bengali", "bs": "bosnian", "ca": "catalan", "cs": "czech", "cy": "welsh",
    "da": "dansk", "de": "deutsch", "el": "greek", "en": "english", "eo": "esperanto", "es": "espanol",
    "et": "estonian", "eu": "basque", "fa": "persian", "fi": "suomi", "fo": "faroese", "fr": "francais",
    "fy": "frisian", "ga": "irish", "gd": "gaelic", "gl": "galician", "gu": "gujarati", "he": "hebrew",
    "hi": "hindi", "hr": "croatian", "hu": "hungarian", "ia": "interlingua", "id": "indonesian",
    "is": "icelandic", "it": "italiano", "ja": "nihongo", "jv": "javanese", "ka": "georgian",
    "kn": "kannada", "ko": "hangul", "la": "latin", "lt": "lithuanian", "lv": "latvian", "mk": "macedonian",
    "ml": "malayalam", "mr": "marathi", "ms": "malay", "mt": "maltese", "nb": "norsk", "no": "norsk",
    "ne": "nepali", "nl": "nederlands", "oc": "occitan", "pa": "punjabi", "pl": "polski", "pt": "portugues",
    "ro": "romanian", "ru": "russian", "si": "sinhalese", "sk": "slovak", "sl": "slovenian", "sq": "albanian",
    "sr": "serbian", "su": "sudanese", "sv": "svenska", "sw": "swahili", "ta": "tamil", "te": "telugu",
    "th": "thai", "ti": "tigrinya", "tl": "tagalog", "tr": "turkce", "uk": "ukrainian", "ur": "urdu",
    "uz": "uzbek", "vi": "vietnamese", "xh": "xhosa", "zh": "jiantizhongwen", "zu": "zulu",
}  # fmt: skip
_STARTPAGE_BY_COUNTRY: Final = {("zh", "TW"): "fantizhengwen", ("zh", "HK"): "fantizhengwen", ("pt", "BR"): "brazilian"}
#: Startpage's results regions (`qsr`) by (language, country), as its settings page lists them;
#: the first of a country is its default.
STARTPAGE_REGIONS: Final = {
    ("ar", "EG"): "ar_EG", ("bg", "BG"): "bg_BG", ("es", "ES"): "es_ES", ("ca", "ES"): "ca_ES",
    ("cs", "CZ"): "cs_CZ", ("da", "DK"): "da_DK", ("de", "AT"): "de_AT", ("de", "CH"): "de_CH",
    ("fr", "CH"): "fr_CH", ("it", "CH"): "it_CH", ("de", "DE"): "de_DE", ("el", "GR"): "el_GR",
    ("en", "AU"): "en_AU", ("en", "CA"): "en_CA", ("fr", "CA"): "fr_CA", ("en", "GB"): "en-GB_GB",
    ("id", "ID"): "id_ID", ("en", "ID"): "en_ID", ("en", "IE"): "en_IE", ("en", "IN"): "en_IN",
    ("hi", "IN"): "hi_IN", ("ms", "MY"): "ms_MY", ("en", "MY"): "en_MY", ("en", "NZ"): "en_NZ",
    ("en", "PH"): "en_PH", ("tl", "PH"): "fil_PH", ("en", "SG"): "en_SG", ("ms", "SG"): "ms_SG",
    ("en", "US"): "en_US", ("es", "US"): "es_US", ("en", "ZA"): "en_ZA", ("es", "AR"): "es_AR",
    ("es", "CL"): "es_CL", ("es", "CO"): "es_CO", ("es", "MX"): "es_MX", ("es", "PE"): "es_PE",
    ("es", "UY"): "es_UY", ("es", "VE"): "es_VE", ("et", "EE"): "et_EE", ("fi", "FI"): "fi_FI",
    ("fr", "BE"): "fr_BE", ("nl", "BE"): "nl_BE", ("fr", "FR"): "fr_FR", ("hu", "HU"): "hu_HU",
    ("it", "IT"): "it_IT", ("ja", "JP"): "ja_JP", ("ko", "KR"): "ko_KR", ("no", "NO"): "no_NO",
    ("nl", "NL"): "nl_NL", ("pl", "PL"): "pl_PL", ("pt", "BR"): "pt-BR_BR", ("pt", "PT"): "pt_PT",
    ("ro", "RO"): "ro_RO", ("ru", "BY"): "ru_BY", ("ru", "RU"): "ru_RU", ("sv", "SE"): "sv_SE",
    ("tr", "TR"): "tr_TR", ("uk", "UA"): "uk_UA", ("vi", "VN"): "vi_VN", ("zh", "CN"): "zh-CN_CN",
    ("zh", "HK"): "zh-TW_HK", ("zh", "TW"): "zh-TW_TW",
}  # fmt: skip
STARTPAGE_SAFE: Final = {"off": "none", "moderate": "moderate", "strict": "heavy"}


def startpage_locale(params: SearchParams, label: str) -> tuple[dict[str, str], list[Notice]]:
    """Startpage's `language` and `lui` (its language names), `qsr` (the results region: the
    country's in the language asked, else the country's own; only those Startpage lists) and
    `qadf` (its family filter: none, moderate, heavy)."""
    out: dict[str, str] = {}
    notices: list[Notice] = []
    country, language = params.country, params.language
    if language:
        name = _STARTPAGE_BY_COUNTRY.get((language, country or "")) or STARTPAGE_LANGUAGES.get(language)
        if name is None:
            notices.append(not_applied("language", language, f"{label} has no such search language"))
        else:
            out["language"] = out["lui"] = name
    if country:
        asked = _SAME_LANGUAGE.get(language or "", language)
        region = STARTPAGE_REGIONS.get((asked or "", country)) or next(
            (code for (_, where), code in STARTPAGE_REGIONS.items() if where == country), None
        )
        if region is None:
            notices.append(not_applied("country", country, f"{label} has no results region for it"))
        else:
            out["qsr"] = region
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
