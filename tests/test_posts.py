"""The claim on a daily post: one holder at a time, taken over when its lease runs out."""
from datetime import date

from store.tables.posts import PostKey, begin_send, claim_post, get_post, release

KEY = PostKey.of("C1", "acme/engine", date(2026, 3, 4), "rocm core")
PLAN = [{"text": "parent", "blocks": []}, {"text": "reply", "blocks": []}]


def test_a_live_claim_keeps_others_out_and_a_lapsed_one_is_taken_over(db):
    first = claim_post(db, KEY, "first", lambda: PLAN, lease=30, now=1000)
    assert first.owner == "first" and first.messages == PLAN
    assert claim_post(db, KEY, "second", lambda: [], lease=30, now=1029) is None
    assert claim_post(db, KEY, "first", lambda: [], lease=30, now=1029) is not None  # its holder may come back

    assert begin_send(db, first, 0, lease=30, now=1030)  # renewed until 1060
    assert claim_post(db, KEY, "second", lambda: [], lease=30, now=1059) is None
    second = claim_post(db, KEY, "second", lambda: [], lease=30, now=1061)
    assert second.owner == "second" and second.messages == PLAN and second.in_flight == 0  # the plan and the unrecorded send stay
    assert not begin_send(db, first, 1, lease=30, now=1062)  # the first one stalled; it must stop
    assert get_post(db, "C1", "acme/engine", date(2026, 3, 4), "rocm core").owner == "second"


def test_a_released_claim_is_free_at_once(db):
    post = claim_post(db, KEY, "first", lambda: PLAN, lease=30, now=1000)
    release(db, post)
    assert claim_post(db, KEY, "second", lambda: [], lease=30, now=1001).owner == "second"


def test_a_day_without_messages_is_finished_when_claimed(db):
    post = claim_post(db, KEY, "first", list, lease=30, now=1000)
    assert post.state == "empty" and post.finished
    assert claim_post(db, KEY, "second", list, lease=30, now=1001).finished  # nobody is kept waiting on it
