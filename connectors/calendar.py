"""iCalendar (.ics) files: Google, Outlook and Apple exports, recurrences expanded in a window."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import icalendar
import recurring_ical_events
import structlog

from connectors.base import Item, aware, bad, make_event, participant, resolve_tz, stable_id
from connectors.text import html_to_text, looks_like_html, tidy
from schemas.events import RawEvent

log = structlog.get_logger(__name__)

DEFAULT_PAST = timedelta(days=365)
DEFAULT_FUTURE = timedelta(days=365)
_BEGIN_VEVENT = re.compile(rb"^BEGIN:VEVENT\s*$", re.MULTILINE | re.IGNORECASE)
_Where = dict[int, str]  # id(VEVENT) -> location
_TOP_LEVEL = ("VEVENT", "VTODO", "VJOURNAL", "VFREEBUSY", "VTIMEZONE", "VAVAILABILITY")
# Conference boilerplate that Google and Outlook append to descriptions.
_BOILERPLATE = re.compile(r"(-::~:~::~:~.*|_{30,}\s*\nMicrosoft Teams.*)", re.DOTALL)


class IcsSource:
    """Events of an .ics file; recurring series expanded within [ref - past, ref + future].

    Single (non-recurring) events are emitted whatever their date.
    Ids: `calendar:` + hash(UID) for single events, hash(UID, RECURRENCE-ID in UTC) for
    instances of a series, so a moved or cancelled instance keeps the id of the instance.
    EXDATE'd instances inside the window are emitted as cancelled (attrs status=cancelled).
    Floating times use X-WR-TIMEZONE when the calendar has one, else `default_tz`.
    """

    kind = "calendar"

    def __init__(
        self,
        path: str | Path,
        tenant: str,
        *,
        reference_time: datetime | None = None,
        window_past: timedelta = DEFAULT_PAST,
        window_future: timedelta = DEFAULT_FUTURE,
        default_tz: str | tzinfo = "UTC",
        emit_exdate_cancellations: bool = True,
    ) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.tenant = tenant
        self.default_tz = resolve_tz(default_tz)
        self.reference_time = reference_time
        self.window_past = window_past
        self.window_future = window_future
        self.emit_exdate_cancellations = emit_exdate_cancellations

    def window(self) -> tuple[datetime, datetime]:
        ref = aware(self.reference_time or datetime.now(UTC), self.default_tz)
        return ref - self.window_past, ref + self.window_future

    def read(self) -> Iterator[Item]:
        seen: set[str] = set()
        calendars, bads = self._parse(self.path.read_bytes())
        yield from bads
        for cal, located in calendars:
            for item in _CalendarReader(self, cal, located).items():
                if isinstance(item, RawEvent):
                    if item.id in seen:
                        continue  # the same VEVENT twice in one export
                    seen.add(item.id)
                yield item

    def _parse(self, data: bytes) -> tuple[list[tuple[icalendar.Calendar, _Where]], list[Item]]:
        """Calendars of the file with each VEVENT's location; salvage a broken file."""
        if b"BEGIN:VCALENDAR" not in data[:4096].upper():
            reason = (
                "empty file" if not data.strip() else "not an iCalendar file (no BEGIN:VCALENDAR)"
            )
            return [], [bad(self.path.name, reason)]
        expected = len(_BEGIN_VEVENT.findall(data))
        try:
            calendars = icalendar.Calendar.from_ical(data, multiple=True)
        except Exception as exc:  # icalendar raises ValueError and others on broken input
            log.info("ics_salvage", path=self.name, reason=str(exc)[:200])
            return self._salvage(data)
        if sum(len(cal.walk("VEVENT")) for cal in calendars) < expected:
            log.info("ics_salvage", path=self.name, reason="components lost in parsing")
            return self._salvage(data)
        located = []
        for cal in calendars:
            events = cal.walk("VEVENT")
            located.append(
                (cal, {id(ev): f"{self.path.name}:VEVENT {n}" for n, ev in enumerate(events, 1)})
            )
        return located, []

    def _salvage(self, data: bytes) -> tuple[list[tuple[icalendar.Calendar, _Where]], list[Item]]:
        """Parse component by component; a block without END is reported, the rest kept."""
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        header: list[str] = []
        blocks: list[tuple[int, str, list[str]]] = []  # (first line no, name, lines)
        bads: list[Item] = []
        current: tuple[int, str, list[str]] | None = None
        for no, line in enumerate(lines, 1):
            upper = line.strip().upper()
            if current is None:
                name = upper[6:] if upper.startswith("BEGIN:") else ""
                if name in _TOP_LEVEL:
                    current = (no, name, [line])
                elif upper not in ("BEGIN:VCALENDAR", "END:VCALENDAR") and line.strip():
                    header.append(line)
                continue
            current[2].append(line)
            if upper == f"END:{current[1]}":
                blocks.append(current)
                current = None
            elif upper.startswith("BEGIN:") and upper[6:] in _TOP_LEVEL:
                bads.append(bad(f"{self.path.name}:line {current[0]}", f"{current[1]} has no END"))
                current = (no, upper[6:], [line])
        if current is not None:
            bads.append(
                bad(
                    f"{self.path.name}:line {current[0]}",
                    f"{current[1]} truncated (file ends before END:{current[1]})",
                )
            )
        timezones = [b for b in blocks if b[1] == "VTIMEZONE"]
        cal = icalendar.Calendar()
        head = _parse_text(["BEGIN:VCALENDAR", *header, "END:VCALENDAR"])
        if head is not None:
            for key, value in head.property_items(recursive=False):
                if key not in ("BEGIN", "END"):
                    cal.add(key, value)
        located: dict[int, str] = {}
        for no, name, block in blocks:
            if name == "VTIMEZONE":
                continue
            tz_lines = [line for t in timezones for line in t[2]]
            parsed = _parse_text(["BEGIN:VCALENDAR", *header, *tz_lines, *block, "END:VCALENDAR"])
            if parsed is None:
                bads.append(bad(f"{self.path.name}:line {no}", f"unparseable {name}"))
                continue
            for comp in parsed.subcomponents:
                if comp.name == name:
                    cal.add_component(comp)
                    located[id(comp)] = f"{self.path.name}:line {no}"
        return [(cal, located)], bads


def _parse_text(lines: list[str]) -> icalendar.Calendar | None:
    try:
        return icalendar.Calendar.from_ical("\r\n".join(lines) + "\r\n")
    except Exception:
        return None


class _CalendarReader:
    """Maps one parsed calendar to RawEvents."""

    def __init__(self, src: IcsSource, cal: icalendar.Calendar, located: _Where) -> None:
        self.src = src
        self.cal = cal
        self.located = located
        xwr = cal.get("X-WR-TIMEZONE")
        self.floating_tz = src.default_tz
        if xwr:
            try:
                self.floating_tz = resolve_tz(str(xwr))
            except Exception:
                log.info("ics_unknown_x_wr_timezone", path=src.name, value=str(xwr))
        self.calendar_name = str(cal.get("X-WR-CALNAME", "")) or None
        self.method_cancel = str(cal.get("METHOD", "")).upper() == "CANCEL"

    def items(self) -> Iterator[Item]:
        groups: dict[str, list[icalendar.Component]] = {}
        for ev in self.cal.walk("VEVENT"):
            location = self.location(ev)
            problem = _problem(ev)
            if problem:
                yield bad(location, problem)
                continue
            if not _prop(ev, "UID"):
                ev["UID"] = "nouid-" + stable_id("x", ev.to_ical().decode("utf-8", "replace"))
            groups.setdefault(str(ev["UID"]), []).append(ev)
        start, stop = self.src.window()
        for uid, events in groups.items():
            yield from self.series(uid, events, start, stop)

    def location(self, ev: icalendar.Component) -> str:
        where = self.located.get(id(ev), f"{self.src.path.name}:VEVENT")
        uid = _prop(ev, "UID")
        return f"{where} (UID {uid})" if uid else where

    def series(
        self, uid: str, events: list[icalendar.Component], start: datetime, stop: datetime
    ) -> Iterator[Item]:
        recurring = any("RRULE" in ev or "RDATE" in ev or "RECURRENCE-ID" in ev for ev in events)
        mini = icalendar.Calendar()
        for name in ("X-WR-TIMEZONE", "CALSCALE"):
            if name in self.cal:
                mini[name] = self.cal[name]
        for ev in events:
            mini.add_component(ev)
        where = self.location(events[0])
        try:
            query = recurring_ical_events.of(mini)
            # A single event is kept whatever its date; only series are cut to the window.
            occurrences = list(query.between(start, stop) if recurring else query.all())
        except Exception as exc:
            yield bad(where, f"cannot expand the series: {exc}")
            return
        emitted: set[str] = set()
        for occ in occurrences:
            rid = _prop(occ, "RECURRENCE-ID")
            key = self.rid_key(rid.dt) if (recurring and rid is not None) else None
            event_id = stable_id("calendar", uid, key) if key else stable_id("calendar", uid)
            emitted.add(event_id)
            yield self.to_event(occ, event_id, key, where)
        if not (self.src.emit_exdate_cancellations and recurring):
            return
        for master in events:
            if "RRULE" not in master and "RDATE" not in master:
                continue
            for value in _dates(_prop(master, "EXDATE")):
                when = aware(value, self.floating_tz)
                if not (start <= when < stop):
                    continue
                excluded = self.rid_key(value)
                event_id = stable_id("calendar", uid, excluded)
                if event_id in emitted:
                    continue
                emitted.add(event_id)
                yield self.to_event(master, event_id, excluded, where, exdate=value)

    def rid_key(self, value: date | datetime) -> str:
        if not isinstance(value, datetime):
            return value.isoformat()
        return aware(value, self.floating_tz).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")

    def to_event(
        self,
        ev: icalendar.Component,
        event_id: str,
        rid_key: str | None,
        where: str,
        exdate: date | datetime | None = None,
    ) -> Item:
        dtstart = exdate if exdate is not None else _prop(ev, "DTSTART").dt
        end_prop = _prop(ev, "DTEND")
        dtend = None if exdate is not None or end_prop is None else end_prop.dt
        all_day = not isinstance(dtstart, datetime)
        status = str(_prop(ev, "STATUS") or "CONFIRMED").lower()
        if exdate is not None or self.method_cancel:
            status = "cancelled"
        organizer = _prop(ev, "ORGANIZER")
        people: list[str] = []
        if organizer is not None:
            people.append(_person(organizer))
        attendees = []
        for att in _as_list(_prop(ev, "ATTENDEE")):
            people.append(_person(att))
            params = getattr(att, "params", {})
            attendees.append(
                {
                    "name": str(params.get("CN", "")).strip('"'),
                    "email": str(att).removeprefix("mailto:").removeprefix("MAILTO:").lower(),
                    "partstat": str(params.get("PARTSTAT", "")).lower() or None,
                    "role": str(params.get("ROLE", "")).lower() or None,
                }
            )
        attrs: dict[str, Any] = {
            "uid": str(_prop(ev, "UID")),
            "status": status,
            "start": _iso(dtstart, self.floating_tz),
            "end": _iso(dtend, self.floating_tz) if dtend is not None else None,
            "all_day": all_day,
            "recurring": rid_key is not None,
        }
        if rid_key is not None:
            attrs["recurrence_id"] = rid_key
        if exdate is not None:
            attrs["cancelled_by"] = "EXDATE"
        for key, prop in (("location", "LOCATION"), ("calendar", None), ("url", "URL")):
            value = self.calendar_name if prop is None else _prop(ev, prop)
            if value:
                attrs[key] = tidy(str(value))
        if organizer is not None:
            attrs["organizer"] = _person(organizer)
        if attendees:
            attrs["attendees"] = attendees[:50]
        conference = _prop(ev, "X-GOOGLE-CONFERENCE") or _prop(
            ev, "X-MICROSOFT-SKYPETEAMSMEETINGURL"
        )
        if conference:
            attrs["conference"] = str(conference)
        if "SEQUENCE" in ev:
            with contextlib.suppress(TypeError, ValueError):
                attrs["sequence"] = int(_prop(ev, "SEQUENCE"))
        return make_event(
            where,
            id=event_id,
            tenant=self.src.tenant,
            source="calendar",
            ts=aware(dtstart, self.floating_tz),
            title=str(_prop(ev, "SUMMARY") or ""),
            body=_description(_prop(ev, "DESCRIPTION")),
            participants=people,
            attrs=attrs,
        )


def _problem(ev: icalendar.Component) -> str | None:
    errors = getattr(ev, "errors", None) or []
    if errors:
        return "; ".join(f"{prop}: {msg}" for prop, msg in errors)
    if _prop(ev, "DTSTART") is None:
        return "VEVENT has no DTSTART"
    try:
        _prop(ev, "DTSTART").dt  # noqa: B018 - forces the value to parse
    except Exception as exc:
        return f"DTSTART: {exc}"
    return None


def _prop(component: icalendar.Component, name: str) -> Any:
    """A property value (untyped: icalendar's value union is too wide to be useful here)."""
    return component.get(name)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _dates(prop: Any) -> Iterator[date | datetime]:
    for entry in _as_list(prop):
        for item in getattr(entry, "dts", []):
            yield item.dt


def _person(addr: Any) -> str:
    params = getattr(addr, "params", {})
    return participant(str(params.get("CN", "")), str(addr))


def _iso(value: date | datetime, floating_tz: tzinfo) -> str:
    if isinstance(value, datetime):
        return aware(value, floating_tz).isoformat()
    return value.isoformat()


def _description(value: Any) -> str:
    if not value:
        return ""
    text = str(value)
    if looks_like_html(text):
        text = html_to_text(text.replace("\n", "<br>"), keep_links=True)
    return tidy(_BOILERPLATE.sub("", text))
