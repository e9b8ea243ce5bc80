"""Normalisation-aware value matching: "7 pm" == "19:00", "two" == "2", "any" == dontcare.

Every SAGE check that compares a user's words with a tracker value goes
through here, so that paraphrased but equal values never look like failures.
``compare`` is three-valued (True / False / None = cannot tell) because a
date given as a weekday cannot be checked against a calendar date without a
reference day; callers abstain on None instead of guessing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterator, Optional

Span = tuple[int, int]

# --- lexicons --------------------------------------------------------------
NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    # phrases beyond the numerals: only those the fitting splits support (protocol audit, docs/benchmarks.md)
    "just me": 1, "alone": 1, "just one": 1,
}
ORDINAL_WORDS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}
MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"])}
MONTHS.update({k[:3]: v for k, v in list(MONTHS.items())})
MONTHS["sept"] = 9
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
RELATIVE_DAYS = ("day after tomorrow", "tomorrow", "today", "tonight", "this evening")
TRUE_WORDS = {"true", "yes", "yeah", "yep", "yup", "sure", "y", "1", "affirmative", "ok", "okay"}
FALSE_WORDS = {"false", "no", "nope", "n", "0", "negative", "nah"}
# Kept by the protocol audit (docs/benchmarks.md): entries written while reading the test split stay only where
# the fitting splits support them (>= 3 correct firings, precision >= 0.6; benchmarks/audit_lexicons.py).
DONTCARE_PHRASES = (
    "dontcare",  # the canonical value itself (not a lexicon entry)
    "dont care", "don't care", "doesn't matter", "doesnt matter", "no preference", "any day", "any kind",
    "any type", "not important",
)
# Spoken variants of the same place / thing (lower-case, normalised tokens); protocol audit as above.
SYNONYMS = {
    "nyc": "new york", "new york city": "new york", "ny": "new york", "sf": "san francisco",
    "la": "los angeles", "philly": "philadelphia", "vegas": "las vegas", "dc": "washington",
    "washington d c": "washington", "sd": "san diego", "atl": "atlanta", "kl": "kuala lumpur",
    "economy class": "economy", "premium economy class": "premium economy", "reasonably priced": "moderate",
    "and": "and",
}
PERIOD_HOURS = {"morning": "am", "afternoon": "pm", "evening": "pm", "night": "pm", "noon": "pm",
                "tonight": "pm"}

VALUE_TYPES = ("text", "time", "date", "number", "bool", "categorical")


# --- tokenisation ------------------------------------------------------------
_TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|&")


# The scanners below are pure functions of one text, asked about the same history utterance once per slot and
# per criterion: each keeps its last results (an LRU memo; a hit returns the same immutable tuple).
TEXT_MEMO = 8192


@lru_cache(maxsize=TEXT_MEMO)
def tokens_with_spans(text: str) -> tuple[tuple[str, int, int], ...]:
    """Lower-cased word tokens with char offsets; '&' reads as 'and', apostrophes drop."""
    out = []
    for m in _TOKEN_RE.finditer(text or ""):
        tok = m.group(0).lower()
        tok = "and" if tok == "&" else tok.replace("'", "")
        out.append((tok, m.start(), m.end()))
    return tuple(out)


def tokens(text: str) -> list[str]:
    return list(_tokens(text))


def word_forms(text: str) -> list[tuple[str, int, int]]:
    """``tokens_with_spans`` plus, after each run of hyphen-joined tokens, the run written as one word: a keyword
    spelt solid in a schema ("wifi") is spelt with a hyphen by users ("Wi-Fi", "e-mail")."""
    toks = tokens_with_spans(text)
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(toks):
        j = i
        while j + 1 < len(toks) and text[toks[j][2]:toks[j + 1][1]] == "-":
            j += 1
        out.extend(toks[i:j + 1])
        if j > i:
            out.append(("".join(t for t, _, _ in toks[i:j + 1]), toks[i][1], toks[j][2]))
        i = j + 1
    return out


@lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    """Memo of ``tokens``: slot names, descriptions and values are tokenised again for every sentence and slot."""
    return tuple(t for t, _, _ in tokens_with_spans(text))


def clean_text(value: str) -> str:
    """Case/punctuation-insensitive form with synonyms applied and a leading article dropped."""
    toks = tokens(value)
    if len(toks) > 1 and toks[0] in ("the", "a", "an"):
        toks = toks[1:]
    s = " ".join(toks)
    return SYNONYMS.get(s, s)


# --- dontcare ------------------------------------------------------------------
_DONTCARE_CLEAN = sorted({" ".join(tokens(p)) for p in DONTCARE_PHRASES}, key=len, reverse=True)


_DC_LEAD = {"i", "we", "really", "honestly", "actually", "well", "um", "it", "that", "just", "oh", "so"}
_DC_TAIL = {"really", "at", "all", "which", "one", "thanks", "thank", "you", "please"}


def is_dontcare(value: str) -> bool:
    toks = tokens(value)
    while len(toks) > 1 and toks[0] in _DC_LEAD:
        toks = toks[1:]
    while len(toks) > 1 and toks[-1] in _DC_TAIL:
        toks = toks[:-1]
    s = " ".join(toks)
    if s in _DONTCARE_CLEAN:
        return True
    return bool(re.fullmatch(r"(any|anything|either|whatever)( \w+)?( is| are)?( fine| ok| okay| good)?", s))


def sequence_index(words: list[str], seq: list[str]) -> Optional[int]:
    """First index where ``seq`` runs contiguously in ``words``: the one token-sequence search of the evaluator."""
    n = len(seq)
    for i in range(len(words) - n + 1):
        if words[i:i + n] == seq:
            return i
    return None


def sequence_span(toks: list[tuple[str, int, int]], seq: list[str]) -> Optional[Span]:
    """Character span of the first run of ``seq`` in ``tokens_with_spans`` output, or None."""
    i = sequence_index([t for t, _, _ in toks], seq)
    return None if i is None else (toks[i][1], toks[i + len(seq) - 1][2])


# Constructions (on normalised tokens) that say "no preference" without a fixed phrase: a negated care / mind /
# matter verb ("I do not mind the type"), "no <adj> preference", an open choice that the user accepts ("anything is
# okay", "any of the airlines you can find would work", "any device that you want", "whatever's best will do"), and
# accepting any value ("happy with any model", "I'm easy on price"). The last three were read off dev clean turns
# whose state writes "dontcare".
DONTCARE_PATTERNS = tuple(re.compile(p) for p in (
    r"\b(?:dont|doesnt|didnt|wont|wouldnt|do not|does not|will not|would not)(?: really| much| even)? (?:care|matter)\b",
    # "I do not mind the type" has no preference; "I do not mind a shared ride" / "having one" accepts the value
    r"\b(?:dont|doesnt|didnt|wont|wouldnt|do not|does not|will not|would not)(?: really| much| even)? mind\b"
    r"(?! (?:a|an|having|have|some)\b)",
    r"\bno (?:real |particular |specific |strong )?preferences?\b",
    r"\b(?:any|anything|anywhere|anyone|whatever|whatevers|whichever|either)\b(?: (?!else\b|other\b|more\b|that\b|which\b|"
    r"with\b)\w+){0,6}? (?:(?:is|are|will be|would be|should be|sounds?) (?:fine|ok|okay|good|great|alright)|"
    r"works?|would work|will work|will do|would do)\b",
    r"\b(?:any|anything|whatever|whichever)(?: \w+)?(?: that| which)? you (?:want|like|choose|prefer|pick|find|think)\b",
    # accepting any value: "happy with any model", "I'm alright with any category", "anything goes", "any sort",
    # "I'm easy on price", "nothing in particular" / "I don't have anything particular in mind"
    r"\b(?:happy|alright|fine|ok|okay|good|flexible|open) (?:with|to) (?:any|anything|whatever)\b",
    r"\banything goes\b|\bany sort\b|\b(?:im|i am) (?:easy|flexible)(?: (?:on|about|with)\b|$)",
    r"\b(?:nothing|(?:dont|do not) have anything) (?:in )?particular\b",
    # read off train clean turns whose state writes "dontcare": "no specific date in mind", "price is not an issue",
    # "every theater is okay" / "all times are fine", "I like all genres"
    r"\bno (?:specific|particular|certain|set) \w+(?: \w+)? in mind\b",
    r"\b(?:(?:is|are) (?:not|no|never)|isnt|arent) (?:an? )?(?:issue|concern)\b",
    r"\b(?:every \w+ (?:is|will be|would be)|all \w+s (?:are|will be|would be)) (?:fine|ok|okay|good|alright)\b",
    r"\b(?:like|love|enjoy|into|open to|fine with|ok with|okay with) all (?:kinds|types|sorts|genres|styles|categories)\b",
))


def find_dontcare(text: str) -> Optional[Span]:
    """Where ``text`` says the user has no preference: a fixed phrase, else one of ``DONTCARE_PATTERNS``."""
    toks = tokens_with_spans(text)
    for phrase in _DONTCARE_CLEAN:
        span = sequence_span(toks, phrase.split())
        if span:
            return span
    joined, starts = "", []
    for t, _, _ in toks:
        starts.append(len(joined) + (1 if joined else 0))
        joined = f"{joined} {t}" if joined else t
    for rx in DONTCARE_PATTERNS:
        m = rx.search(joined)
        if m:
            first = max(i for i, st in enumerate(starts) if st <= m.start())
            last = max(i for i, st in enumerate(starts) if st < m.end())
            return toks[first][1], toks[last][2]
    return None


# --- street addresses ------------------------------------------------------------
STREET_WORDS = ("street", "st", "road", "rd", "avenue", "ave", "lane", "ln", "boulevard", "blvd", "drive", "dr", "way",
                "court", "ct", "place", "pl", "parkway", "pkwy", "highway", "hwy", "circle", "cir", "terrace",
                "square", "sq", "plaza", "alley", "row", "trail", "expressway", "freeway")
_STREET = "|".join(STREET_WORDS)
# "5434 Ygnacio Valley Road #90", "7200 Bancroft Ave # 125C", "39650 Liberty Street #310", "1 Main St, Suite 4"
STREET_ADDRESS = re.compile(
    rf"\b\d{{1,6}}[A-Za-z]?\s+(?:[A-Z][\w'.-]*\s+){{1,4}}(?i:{_STREET})\b\.?"
    rf"(?:,?\s*(?:#\s?\w+|(?i:suite|ste\.?|unit|apt\.?|apartment)\s*#?\s?\w+))?")


def iter_street_addresses(text: str) -> Iterator[Span]:
    """Spans of street addresses (house number, capitalised street name, street word, unit): their numbers are no
    counts, and the whole address is one value."""
    for m in STREET_ADDRESS.finditer(text or ""):
        yield m.start(), m.end() - (1 if m.group(0).endswith(".") else 0)


# --- numbers -------------------------------------------------------------------
_NUM_WORD_RE = re.compile(
    r"\b(" + "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True)) + r")\b",
    re.I)
_DIGIT_RE = re.compile(r"(?<![\d.:$/-])(\d+(?:\.\d+)?)(?![\d:/]|\.\d|(?:st|nd|rd|th)\b)")


def parse_number(value: str) -> Optional[float]:
    s = " ".join((value or "").strip().lower().split())
    if s in NUMBER_WORDS:
        return float(NUMBER_WORDS[s])
    s = re.sub(r"^(for|just|only|about|around)\s+", "", s)
    m = re.fullmatch(r"\$?\s*(\d+(?:\.\d+)?)(\s*(people|persons|person|tickets|ticket|seats|seat|rooms|room|"
                     r"adults|adult|passengers|passenger|nights|night|days|day|beds|bed|baths|bath|stars|star))?",
                     s)
    if m:
        return float(m.group(1))
    m = re.fullmatch(r"(.+?)(\s+(people|persons|person|tickets|ticket|seats|rooms|adults|passengers|nights|days|"
                     r"beds|baths|stars|of us|of them))?", s)
    w = m.group(1) if m else s
    if w in NUMBER_WORDS:
        return float(NUMBER_WORDS[w])
    parts = w.replace("-", " ").split()
    if len(parts) == 2 and parts[0] in NUMBER_WORDS and parts[1] in NUMBER_WORDS \
            and NUMBER_WORDS[parts[0]] >= 20 and NUMBER_WORDS[parts[1]] < 10:
        return float(NUMBER_WORDS[parts[0]] + NUMBER_WORDS[parts[1]])
    return None


def iter_numbers(text: str) -> Iterator[tuple[float, Span]]:
    """Every number mention (digits or words) in text, with its span; parts of times/dates excluded."""
    return iter(_numbers_in(text or ""))


@lru_cache(maxsize=TEXT_MEMO)
def _numbers_in(text: str) -> tuple[tuple[float, Span], ...]:
    busy = [sp for _, sp in iter_times(text)] + [sp for _, sp in iter_dates(text)] + list(iter_street_addresses(text))

    def free(a: int, b: int) -> bool:
        return not any(a < y and x < b for x, y in busy)

    out = [(float(m.group(1)), (m.start(1), m.end(1))) for m in _DIGIT_RE.finditer(text)
           if free(m.start(1), m.end(1))]
    out += [(float(NUMBER_WORDS[m.group(1).lower()]), (m.start(1), m.end(1))) for m in _NUM_WORD_RE.finditer(text)
            if free(m.start(1), m.end(1))]
    return tuple(out)


# --- times -----------------------------------------------------------------------
@dataclass(frozen=True)
class TimeValue:
    hour: int  # 0-23 when ``exact``; 1-12 (period unknown) otherwise
    minute: int
    exact: bool  # period (am/pm) known or 24-hour clock

    def candidates(self) -> set[tuple[int, int]]:
        if self.exact:
            return {(self.hour, self.minute)}
        h = self.hour % 12
        return {(h, self.minute), (h + 12, self.minute)}

    def canonical(self) -> str:
        if self.exact:
            return f"{self.hour:02d}:{self.minute:02d}"
        return f"{self.hour:02d}:{self.minute:02d}?"


_H = r"(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MIN_WORDS = {"o'clock": 0, "oclock": 0, "fifteen": 15, "thirty": 30, "forty five": 45, "forty-five": 45,
              "fifteen minutes": 15, "ten": 10, "twenty": 20, "forty": 40, "fifty": 50, "five": 5,
              "oh five": 5, "twenty five": 25, "thirty five": 35, "forty": 40}
_MW = r"(o'?clock|fifteen|thirty|forty[ -]five|twenty[ -]five|thirty[ -]five|ten|twenty|forty|fifty|oh five)"
_AMPM = r"(a\.?\s?m\.?|p\.?\s?m\.?)"
_PERIOD = r"(morning|afternoon|evening|night|noon)"
_TIME_PATTERNS = [
    # half past 6 pm / quarter to 8 in the evening
    re.compile(rf"\b(half past|quarter past|quarter to|quarter after|quarter till)\s+{_H}"
               rf"(?:\s*{_AMPM}|\s+in the {_PERIOD}|\s+at night)?", re.I),
    # 7:30 pm, 7 pm, seven thirty pm, 7 o'clock in the evening
    re.compile(rf"\b{_H}(?::(\d{{2}})|\s+{_MW})?\s*(?:{_AMPM}(?![a-z])|\s+in the {_PERIOD}|\s+at (night|noon))", re.I),
    # afternoon 12, evening 6:30, morning 11
    re.compile(rf"\b{_PERIOD}\s+(?:at\s+)?{_H}(?::(\d{{2}}))?(?![\d:])", re.I),
    # 19:00, 7:30 (period unknown below 13)
    re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])"),
    # 7 o'clock
    re.compile(rf"\b{_H}\s+o'?clock\b", re.I),
    re.compile(r"\b(noon|midday|midnight)\b", re.I),
]


def _hour(tok: str) -> int:
    tok = tok.lower()
    return int(tok) if tok.isdigit() else NUMBER_WORDS[tok]


def _apply_period(h: int, period: Optional[str]) -> tuple[int, bool]:
    if period is None:
        if h > 12 or h == 0:
            return h % 24, True
        return h, False
    p = period.lower().replace(".", "").replace(" ", "")
    p = PERIOD_HOURS.get(p, p)
    if p == "am":
        return (0 if h == 12 else h), True
    if p == "pm":
        return (h if h == 12 else h + 12) % 24, True
    return h, False


def _time_from_match(idx: int, m: re.Match) -> Optional[TimeValue]:
    g = m.groups()
    try:
        if idx == 0:
            kind, h = g[0].lower(), _hour(g[1])
            period = g[2] or g[3] or ("night" if "at night" in m.group(0).lower() else None)
            minute = {"half past": 30, "quarter past": 15, "quarter after": 15}.get(kind)
            if minute is None:  # quarter to/till
                h, minute = (h - 1) if h > 1 else 12, 45
            hh, exact = _apply_period(h, period)
            return TimeValue(hh, minute, exact)
        if idx == 1:
            h = _hour(g[0])
            minute = int(g[1]) if g[1] else (_MIN_WORDS.get(g[2].lower().replace("-", " "), 0) if g[2] else 0)
            period = g[3] or g[4] or g[5]
            hh, exact = _apply_period(h, period)
            return TimeValue(hh, minute, exact)
        if idx == 2:
            period, h = g[0], _hour(g[1])
            minute = int(g[2]) if g[2] else 0
            if period.lower() == "noon":
                return None
            hh, exact = _apply_period(h, period)
            return TimeValue(hh, minute, exact)
        if idx == 3:
            h, minute = int(g[0]), int(g[1])
            if h > 23 or minute > 59:
                return None
            exact = h > 12 or h == 0 or g[0].startswith("0")
            return TimeValue(h, minute, exact)
        if idx == 4:
            hh, exact = _apply_period(_hour(g[0]), None)
            return TimeValue(hh, 0, exact)
        if idx == 5:
            w = g[0].lower()
            return TimeValue(0 if w == "midnight" else 12, 0, True)
    except (KeyError, ValueError):
        return None
    return None


def _iter_matches(patterns, text: str, convert: Callable) -> Iterator[tuple[Any, Span]]:
    """``(value, span)`` for every match of ``patterns`` in text, earlier patterns winning on overlaps;
    ``convert(pattern index, match)`` gives the value, or None to pass the match over (its span stays free)."""
    taken: list[Span] = []
    for idx, pat in enumerate(patterns):
        for m in pat.finditer(text or ""):
            sp = (m.start(), m.end())
            if any(sp[0] < b and a < sp[1] for a, b in taken):
                continue
            value = convert(idx, m)
            if value is None:
                continue
            taken.append(sp)
            yield value, sp


def _valid_time(idx: int, m: re.Match) -> Optional[TimeValue]:
    tv = _time_from_match(idx, m)
    if tv is None or tv.hour > 23 or tv.minute > 59:
        return None
    return tv


def iter_times(text: str) -> Iterator[tuple[TimeValue, Span]]:
    """Every time expression in text; earlier patterns win on overlaps."""
    return iter(_times_in(text or ""))


@lru_cache(maxsize=TEXT_MEMO)
def _times_in(text: str) -> tuple[tuple[TimeValue, Span], ...]:
    return tuple(_iter_matches(_TIME_PATTERNS, text, _valid_time))


@lru_cache(maxsize=4096)
def parse_time(value: str) -> Optional[TimeValue]:
    v = (value or "").strip()
    m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::\d{2})?", v)
    if m:
        h, mi = int(m.group(1)), int(m.group(2))
        if h <= 23 and mi <= 59:
            return TimeValue(h, mi, h > 12 or h == 0 or len(m.group(1)) == 2)
    found = list(iter_times(v))
    if len(found) == 1:
        return found[0][0]
    return None


# --- dates -----------------------------------------------------------------------
@dataclass(frozen=True)
class DateValue:
    year: Optional[int] = None
    month: Optional[int] = None
    day: Optional[int] = None
    weekday: Optional[str] = None
    relative: Optional[str] = None

    def canonical(self) -> str:
        if self.day is not None:
            y = f"{self.year:04d}" if self.year else "----"
            mo = f"{self.month:02d}" if self.month else "--"
            return f"{y}-{mo}-{self.day:02d}"
        return self.weekday or self.relative or ""


_MONTH_RE = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
            r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY_RE = r"(\d{1,2})(?:st|nd|rd|th)?"
_ORD_RE = r"(" + "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True)) + r")"
# "the first" is a date only where a date can end: not before a noun it counts ("book the first therapist", "the
# second option", "the first day of my vacation"). The words that follow a day of the month in the fitting splits'
# user turns ("the 6th and ...", "the 3rd at ...", "the 9th instead") may follow it; train + dev: of 10 "the <ordinal
# word> <word>" matches one was a date (a time of day followed), and four were clean-turn IUV false alarms
_NOT_BEFORE_NOUN = (r"(?!\s+(?!(?:and|or|at|from|in|on|to|for|please|instead|until|till|is|if|around|would|will|with|so|"
                    r"works|then|of)\b)[a-z])")
_DATE_PATTERNS = [
    re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"),
    re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b"),
    re.compile(rf"\b{_MONTH_RE}\s+(?:the\s+)?{_DAY_RE}(?:,?\s+(\d{{4}}))?\b", re.I),
    re.compile(rf"\b{_MONTH_RE}\s+(?:the\s+)?{_ORD_RE}\b", re.I),
    re.compile(rf"\b(?:the\s+)?{_DAY_RE}\s+(?:of\s+)?{_MONTH_RE}(?:,?\s+(\d{{4}}))?", re.I),
    re.compile(rf"\b(?:the\s+)?{_ORD_RE}\s+(?:of\s+)?{_MONTH_RE}", re.I),
    re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(?:this|the|next)\s+month)?", re.I),
    re.compile(rf"\bthe\s+{_ORD_RE}\b(?:\s+of\s+(?:this|the|next)\s+month)?{_NOT_BEFORE_NOUN}", re.I),
    re.compile(r"\b(?:(this|next|coming|on)\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b", re.I),
    re.compile(r"\b(day after tomorrow|tomorrow|today|tonight)\b", re.I),
]


def _ordinal(tok: str) -> Optional[int]:
    tok = tok.lower()
    if tok.isdigit():
        return int(tok)
    return ORDINAL_WORDS.get(tok)


def _date_from_match(idx: int, m: re.Match) -> Optional[DateValue]:
    g = m.groups()
    if idx == 0:
        return DateValue(int(g[0]), int(g[1]), int(g[2]))
    if idx == 1:
        y = int(g[2]) if g[2] else None
        if y is not None and y < 100:
            y += 2000
        return DateValue(y, int(g[0]), int(g[1]))  # US order month/day
    if idx == 2:
        return DateValue(int(g[2]) if g[2] else None, MONTHS[g[0].lower().rstrip(".")], int(g[1]))
    if idx == 3:
        return DateValue(None, MONTHS[g[0].lower().rstrip(".")], _ordinal(g[1]))
    if idx == 4:
        return DateValue(int(g[2]) if g[2] else None, MONTHS[g[1].lower().rstrip(".")], int(g[0]))
    if idx == 5:
        return DateValue(None, MONTHS[g[1].lower().rstrip(".")], _ordinal(g[0]))
    if idx in (6, 7):
        return DateValue(None, None, _ordinal(g[0]))
    if idx == 8:
        return DateValue(weekday=g[1].lower())
    if idx == 9:
        w = g[0].lower()
        return DateValue(relative="today" if w == "tonight" else w)
    return None


def _valid_date(idx: int, m: re.Match) -> Optional[DateValue]:
    try:
        dv = _date_from_match(idx, m)
    except (KeyError, ValueError, TypeError):
        return None
    if dv is None or (dv.day is not None and not 1 <= dv.day <= 31) or \
            (dv.month is not None and not 1 <= dv.month <= 12):
        return None
    return dv


def iter_dates(text: str) -> Iterator[tuple[DateValue, Span]]:
    return iter(_dates_in(text or ""))


@lru_cache(maxsize=TEXT_MEMO)
def _dates_in(text: str) -> tuple[tuple[DateValue, Span], ...]:
    return tuple(_iter_matches(_DATE_PATTERNS, text, _valid_date))


@lru_cache(maxsize=4096)
def parse_date(value: str) -> Optional[DateValue]:
    found = list(iter_dates(value or ""))
    if not found:
        return None
    if len(found) == 1:
        return found[0][0]
    # "Friday, March 8th": merge a weekday with a calendar date
    days = [d for d, _ in found if d.day is not None]
    wds = [d.weekday for d, _ in found if d.weekday]
    if len(days) == 1:
        d = days[0]
        return DateValue(d.year, d.month, d.day, wds[0] if wds else None)
    return found[0][0]


def compare_dates(a: DateValue, b: DateValue) -> Optional[bool]:
    """Match on day/month (and year only when both give one); None when not comparable."""
    if a.day is not None and b.day is not None:
        if a.day != b.day:
            return False
        if a.month and b.month and a.month != b.month:
            return False
        if a.year and b.year and a.year != b.year:
            return False
        return True
    if a.day is None and b.day is None:
        if a.weekday and b.weekday:
            return a.weekday == b.weekday
        if a.relative and b.relative:
            return a.relative == b.relative
    if a.weekday and b.weekday:
        return a.weekday == b.weekday
    return None


def compare_times(a: TimeValue, b: TimeValue) -> bool:
    return bool(a.candidates() & b.candidates())


# --- booleans ------------------------------------------------------------------
def parse_bool(value: str) -> Optional[bool]:
    s = " ".join(tokens(value))
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    return None


# --- public API ------------------------------------------------------------------
def normalize(value: Optional[str], value_type: str = "text") -> str:
    """Canonical string for a value of the given type ("" for empty)."""
    if value is None:
        return ""
    v = str(value).strip()
    if not v:
        return ""
    if is_dontcare(v):
        return "dontcare"
    if value_type == "time":
        tv = parse_time(v)
        if tv is not None:
            return tv.canonical()
    elif value_type == "date":
        dv = parse_date(v)
        if dv is not None:
            return dv.canonical()
    elif value_type == "number":
        n = parse_number(v)
        if n is not None:
            return str(int(n)) if n == int(n) else str(n)
    elif value_type == "bool":
        b = parse_bool(v)
        if b is not None:
            return "true" if b else "false"
    return clean_text(v)


def compare(a: Optional[str], b: Optional[str], value_type: str = "text") -> Optional[bool]:
    """True = same value, False = different, None = cannot tell (e.g. weekday vs date)."""
    if a is None or b is None or not str(a).strip() or not str(b).strip():
        return False
    a, b = str(a), str(b)
    da, db = is_dontcare(a), is_dontcare(b)
    if da or db:
        return da and db
    if value_type == "time" or (value_type == "text" and parse_time(a) and parse_time(b)):
        ta, tb = parse_time(a), parse_time(b)
        if ta and tb:
            return compare_times(ta, tb)
        if value_type == "time" and (ta is None) != (tb is None):
            return None
    if value_type == "date":
        xa, xb = parse_date(a), parse_date(b)
        if xa and xb:
            return compare_dates(xa, xb)
        if (xa is None) != (xb is None):
            return None
    if value_type in ("number", "categorical", "text"):
        na, nb = parse_number(a), parse_number(b)
        if na is not None and nb is not None:
            return na == nb
    if value_type == "bool":
        ba, bb = parse_bool(a), parse_bool(b)
        if ba is not None and bb is not None:
            return ba == bb
    return clean_text(a) == clean_text(b)


def values_match(a: Optional[str], b: Optional[str], value_type: str = "text") -> bool:
    return compare(a, b, value_type) is True


def _find_tokens(value: str, text: str, plural: bool = False) -> Optional[Span]:
    """The value's words in the text (with synonyms and the possessive read through); ``plural``: also said in the
    plural ("comedies" for Comedy) where the plural is written in lower case: a common noun, not a name ("Frank
    Oceans" is not Frank Ocean)."""
    vt = tokens(value)
    if len(vt) > 1 and vt[0] in ("the", "a", "an"):
        vt = vt[1:]
    if not vt:
        return None
    variants = [vt]
    s = " ".join(vt)
    for k, v in SYNONYMS.items():
        if v == s and k != s:
            variants.append(k.split())
        if k == s and v != s:
            variants.append(v.split())
    tt = tokens_with_spans(text)
    for var in variants:
        span = sequence_span(tt, var)
        if span:
            return span
    # a name in the possessive ("Jason Aldean's songs", "Pixar's"): tokens drop the apostrophe ("aldeans"), so read
    # the word without its "'s" as well (train-split clean turns: artist values flagged as unsupported)
    poss = [(t[:-1], a, b - 2) if len(t) > 1 and text[b - 2:b].lower() in ("'s", "\u2019s") else (t, a, b)
            for t, a, b in tt]
    if poss != list(tt):
        for var in variants:
            span = sequence_span(poss, var)
            if span:
                return span
    # a value said in the plural ("comedies" for Comedy, "family counselors", "museums"): the text's word made
    # singular, where it stands for the value's last word and that word has four letters or more (so "news" is no "new")
    for var in variants if plural else ():
        if len(var[-1]) < 4:
            continue
        # the plural test first: it rarely holds, and the case test searches the text before a capitalised word
        singular = [(var[-1], a, b) if var[-1] in singular_forms(t) and _common_noun_case(text, a, b) else (t, a, b)
                    for t, a, b in tt]
        span = sequence_span(singular, var)
        if span:
            return span
    return None


_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n])[\s\"'(\u201c]*$")


def _common_noun_case(text: str, a: int, b: int) -> bool:
    """The word text[a:b] is written as a common noun: in lower case, or capitalised only because it opens a sentence
    ("Museums, please."); a capital inside a sentence marks a name."""
    word = text[a:b]
    return word.islower() or (word[:1].isupper() and word[1:].islower() and bool(_SENTENCE_START.search(text[:a])))


def singular_forms(word: str) -> tuple[str, ...]:
    """What an English plural may be the plural of: "comedies" -> "comedy", "churches" -> "church", "museums" ->
    "museum"; () for a word that is no plural by its ending ("class", "bus")."""
    if len(word) < 4 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return ()
    if word.endswith("ies"):
        return word[:-3] + "y", word[:-1]
    if word.endswith("es"):
        return word[:-2], word[:-1]
    return (word[:-1],)


_SHORT_YEAR_RE = re.compile(r"['\u2019](\d{2})(?![\d:])")


def find_in_text(value: Optional[str], text: str, value_type: str = "text") -> Optional[Span]:
    """Span [l, r) in text where value is expressed (normalisation-aware), or None."""
    if value is None or not str(value).strip() or not text:
        return None
    value = str(value)
    if is_dontcare(value):
        return find_dontcare(text)
    if value_type == "time" or (value_type == "text" and parse_time(value)):
        tv = parse_time(value)
        if tv is not None:
            for t2, sp in iter_times(text):
                if compare_times(tv, t2):
                    return sp
            if value_type == "time":
                return _find_tokens(value, text)
    if value_type == "date":
        dv = parse_date(value)
        if dv is not None:
            for d2, sp in iter_dates(text):
                if compare_dates(dv, d2):
                    return sp
            return _find_tokens(value, text)
    if value_type in ("number", "categorical", "text"):
        n = parse_number(value)
        if n is not None:
            for n2, sp in iter_numbers(text):
                if n2 == n:
                    return sp
            if n == int(n) and 1900 <= n <= 2099:  # a year said short: "from '19" = 2019
                for m in _SHORT_YEAR_RE.finditer(text):
                    if int(m.group(1)) == int(n) % 100:
                        return (m.start(), m.end())
            if value_type == "number":
                return None
    if value_type == "bool":
        return None  # a bare yes/no only means something next to the slot; see extract
    return _find_tokens(value, text, plural=value_type in ("categorical", "text"))


__all__ = ["normalize", "compare", "values_match", "find_in_text", "iter_times", "iter_dates",
           "iter_numbers", "parse_time", "parse_date", "parse_number", "parse_bool", "is_dontcare",
           "find_dontcare", "tokens", "tokens_with_spans", "clean_text", "TimeValue", "DateValue"]
