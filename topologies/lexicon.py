"""The words foldmem's text analysis knows by heart: stopwords, months, weekdays, units.

One place for every word list the engine uses (naming, fact extraction, the read path's
lexical index), so two parts never disagree about what a month or a stopword is. Plain data:
nothing here is computed from a model or loaded from disk.
"""

from __future__ import annotations


def wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


# words that say nothing about a topic in a person's notes and messages: function words,
# greetings, sign-offs, small numbers, everyday time words and light verbs
STOPWORDS = wordset(
    """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could did didn't do does doesn't doing
    don't down during each few for from further get got had hadn't has hasn't have haven't having he
    he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in
    into is isn't it it's its itself just let's like me more most much must my myself no nor not now
    of off on once only or other ought our ours ourselves out over own please re same shall she
    she'd she'll she's should shouldn't so some such than thanks thank that that's the their theirs
    them themselves then there there's these they they'd they'll they're they've this those through
    to too under until up upon us very via was wasn't we we'd we'll we're we've were weren't what
    what's when when's where where's which while who who's whom why why's will with won't would
    wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves hi hello hey dear
    best regards cheers ok okay still already really maybe one two three four five six week weeks
    today tomorrow yesterday tonight morning afternoon evening day days time next last new see
    need needs make made know think want going go went come back take well good great sure done
    per via etc pm am re fwd fw
    """
)

# the read path's query and document terms drop only function words (its tokens split at
# apostrophes: "don't" -> "don", "t"); a question about "next week" or "what she made" keeps
# those words as search terms
BM25_STOPWORDS = wordset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing don down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own s same she should so some such t than that the
    their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves
    """
)

MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
    "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9,
    "sept": 9, "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12,
    "december": 12,
}  # fmt: skip
WEEKDAYS = {
    "mon": 0, "monday": 0, "tue": 1, "tues": 1, "tuesday": 1, "wed": 2, "wednesday": 2, "thu": 3,
    "thur": 3, "thurs": 3, "thursday": 3, "fri": 4, "friday": 4, "sat": 5, "saturday": 5,
    "sun": 6, "sunday": 6,
}  # fmt: skip
CALENDAR_WORDS = frozenset(MONTHS) | frozenset(WEEKDAYS)
MONTH_ABBREVIATIONS = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)
# words of the day and the hour that, alone, name no thing ("tomorrow morning", "9 am")
DAY_WORDS = wordset("today tomorrow yesterday week weekend morning evening night am pm")

# words that never name a topic: units of time and money, hedges, confirmations
LABEL_SKIP = wordset(
    "minute minutes hour hours day days week weeks month months year years beyond eur euro "
    "euros usd dollars confirmed confirm confirmation reminder update updates quick free "
    "finally thanks please sorry okay yes hey hello hi regards best cheers"
)

# verbs that set, move or call off a plan: the day they name is still ahead ("booked on
# 20 Nov", "Friday's standup moved to Thursday"), whatever their tense
SCHEDULING_VERBS = wordset(
    "move postpone reschedule delay push shift cancel schedule plan book set confirm arrange "
    "fix slate expect agree extend decide choose pick settle"
)
# verbs that report what someone said: the day they name is what was said, not when ("the
# post office lady said Thursday")
REPORTING_VERBS = wordset(
    "say tell write promise mention reply answer ask suggest propose text email message "
    "announce warn reckon guess"
)
# words before a date that cannot be its verb: no parse is needed to read them
NOT_VERBS = wordset(
    "by for to until till before after from at in of the a an this next every each and or "
    "with than around about between since last due"
)
# pronouns that stand for the thing an event is about when a report says it was done
DONE_PRONOUNS = wordset("what it this that them these those")

# social formulas of English conversation: what friends say to part, thank, reassure,
# encourage or wish each other well. Their words look like a goal ("I have to go", "take
# care", "I'll keep you posted", "make a difference") or a problem ("no problem"), but no
# one means a to-do by them, so goal cues and to-do actions are read with them left out.
# Each entry is a regular expression over words (case-insensitive, whole words).
SOCIAL_FORMULAS = (
    # parting: "I have to go!", "gotta run", "talk to you soon", "take care of yourself"
    r"(?:(?:i|we)\s*(?:'ve|’ve)?\s*(?:have|has|got|need|must)\s+to|gotta|got\s+to|gonna)\s+"
    r"(?:go|run|dash|head\s+off)(?=\s*(?:[!.,;]|now\b|bye\b|$))",
    r"(?:talk|chat|speak)\s+(?:to\s+you\s+)?(?:soon|later)",
    r"(?:see|catch)\s+(?:you|ya)\s+(?:soon|later|around|then)",
    r"take\s+care(?:\s+of\s+(?:yourself|yourselves|you))?",
    r"look\s+after\s+(?:yourself|yourselves)",
    r"stay\s+(?:safe|well|strong|positive)",
    r"(?:have|enjoy)\s+(?:a|an|your)\s+(?:good|great|nice|lovely|wonderful|fun|safe|amazing)"
    r"(?:\s+\w+)?",
    # keeping in touch: "I'll keep you posted", "I'll let you know", "let me know if ..."
    r"(?:i|we)\s*(?:'ll|’ll|\s+will)\s+(?:\w+\s+){0,3}?(?:keep\s+you\s+(?:posted|updated|"
    r"in\s+the\s+loop)|let\s+you\s+know|update\s+you|keep\s+in\s+touch)",
    r"keep\s+(?:me|us)\s+(?:posted|updated|in\s+the\s+loop)",
    r"let\s+(?:me|us)\s+know(?=\s+(?:if|what\s+you\s+think|how|your\s+thoughts)\b|\s*[!.]|\s*$)",
    r"(?:keep|stay)\s+in\s+touch",
    # thanks and reassurance: "no problem", "I really appreciate your support"
    r"no\s+(?:problems?|worries|worry)",
    r"(?:really\s+|truly\s+|so\s+)?appreciate\s+(?:it|that|this|you|your\s+\w+)",
    r"(?:always\s+)?happy\s+to\s+help",
    r"don'?t\s+mention\s+it",
    # encouragement: "keep it up", "you've got this", "take your time", "make a difference"
    r"keep\s+(?:it\s+up|up\s+the\s+(?:good|great|hard)\s+work|going|at\s+it|pushing)",
    r"(?:you|we)\s*(?:'ve|’ve)?\s+(?:got|get)\s+this",
    r"hang\s+in\s+there",
    r"take\s+(?:your|the|some)\s+time(?!\s+off\b)(?:\s+for\s+(?:yourself|yourselves))?",
    r"good\s+luck",
    r"mak(?:e|es|ing)\s+(?:a|an|the)?\s*(?:\w+\s+)?(?:difference|impact)",
    r"(?:follow|chase|pursue)(?:s|ing)?\s+(?:your|our|my)\s+(?:dreams?|passions?)",
    r"believe\s+in\s+(?:yourself|yourselves|you)",
    r"keep\s+(?:your|ur)\s+(?:head|chin|spirits?)\s+up",
    # an inference about how something felt, not an obligation: "must have been awesome"
    r"must\s+(?:have\s+(?:been|felt|had|\w+ed)|feel|be\s+(?:so|really|very|such))",
)
# verbs of feeling or thanks: they say how the person feels about a thing ("enjoy the small
# things", "appreciate the support"), never what they will do about it
FEELING_VERBS = wordset("appreciate enjoy thank cherish treasure admire")
# nouns of an intention, a duty or a request: an infinitive after one is what someone means,
# has or asks to do ("a plan to renew my passport", "time to book the flights", "your
# request to reprocess a claim", "an appointment to renew the passport": a slot booked for
# it), where after any other noun it only says what the noun is ("an opportunity to add to
# our collage")
INTENTION_NOUNS = wordset(
    "plan plans need goal aim intention promise decision reminder task time deadline "
    "commitment duty obligation resolution request order instruction appointment meeting"
)
# nouns of a place or an organisation where a thing is done ("the passport renewal office",
# "the Austria Visa Application Centre"): no kind of the matter a folder holds
PLACE_WORDS = wordset(
    "office centre center desk agency department bureau branch shop store clinic station "
    "hall counter company team group street road avenue"
)
# nouns of an account of how a thing goes over time: its timeline, schedule or status. A
# note titled "Ceiling timeline" is one account of the ceiling, which the folder's other
# members speak of without it: the thing, not its account, is what they hold
ACCOUNT_NOUNS = wordset("timeline timetable schedule status")
# nouns that only say how much ("get a bit of rest", "do a lot"): no thing to act on
QUANTITY_NOUNS = wordset("bit bits lot lots ton tons bunch couple plenty handful")
# nouns of a light-verb idiom, which stand for the verb's own event and name nothing of their
# own ("I'll give it a go", "have a try", "take a look", "give it a shot", "let's find a time
# that works"): the closed class of English's idioms of trying and looking (Huddleston and
# Pullum, The Cambridge Grammar of the English Language, 2002, ch. 4, light verbs: "have a
# go / a look / a try", "give it a try"), and "time", the general noun of when
LIGHT_NOUNS = wordset("go try shot stab crack whirl look peek glance time")
# the concrete general nouns, which stand for whatever the talk is about and name nothing of
# their own ("I'm excited to try new things", "keep things flowing"): Halliday and Hasan,
# Cohesion in English, 1976, ch. 6, general nouns ("thing", "stuff")
GENERAL_NOUNS = wordset("thing stuff")
# verbs that pass a thing on to someone: what a friend sends, shows, shares or gives the other
# in a chat is passed on in the chat itself ("I can send you a link", "I'll give you that
# boost"), the verbs of giving and sending of Levin (English Verb Classes and Alternations,
# 1993, 13.1 and 11.1), with showing and sharing
PASSING_VERBS = wordset("give send show share lend hand pass forward")
