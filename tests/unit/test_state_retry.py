"""The one retry policy of stored state: which errors are retried, how often, after what pauses."""

from __future__ import annotations

import pytest

from bot.core import errors
from bot.state.retry import CONFLICT_TRIES, RetryPolicy, StateConflict, StateUnavailable


class Tries:
    """A write that fails with each of `failures` in turn, then answers "v9"."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.sent = 0

    async def __call__(self) -> str:
        self.sent += 1
        if self.failures:
            raise self.failures.pop(0)
        return "v9"


class Pauses:
    def __init__(self) -> None:
        self.waited: list[float] = []
        self.warned: list[tuple[str, float]] = []

    async def sleep(self, seconds: float) -> None:
        self.waited.append(seconds)

    def warn(self, error: Exception, pause: float) -> None:
        self.warned.append((str(error), pause))


async def not_landed() -> str | None:
    return None


async def test_a_conflicting_change_is_redone_until_it_goes_through() -> None:
    attempt = Tries(StateConflict("1"), StateConflict("2"))
    assert (
        await RetryPolicy().redo_on_conflict(attempt, lambda: StateUnavailable("gave up")) == "v9"
    )
    assert attempt.sent == 3


async def test_a_change_that_keeps_conflicting_is_given_up_after_the_policys_tries() -> None:
    attempt = Tries(*(StateConflict(str(i)) for i in range(10)))
    with pytest.raises(StateUnavailable, match=r"^kept changing$"):
        await RetryPolicy().redo_on_conflict(attempt, lambda: StateUnavailable("kept changing"))
    assert attempt.sent == CONFLICT_TRIES == 5


async def test_only_a_conflict_redoes_a_change() -> None:
    attempt = Tries(StateUnavailable("disk full"))
    with pytest.raises(StateUnavailable, match="disk full"):
        await RetryPolicy().redo_on_conflict(attempt, lambda: StateUnavailable("gave up"))
    assert attempt.sent == 1


async def test_a_write_that_got_a_5xx_is_sent_again_after_each_pause_and_each_is_told() -> None:
    pauses, send = Pauses(), Tries(errors.KubeUnavailable("503"), errors.KubeWriteUnknown("lost"))
    policy = RetryPolicy(backoffs=(0.5, 1.0, 2.0))
    assert await policy.resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=not_landed)
    assert (send.sent, pauses.waited) == (3, [0.5, 1.0])
    assert pauses.warned == [("503", 0.5), ("lost", 1.0)]


async def test_a_write_that_keeps_failing_fails_after_the_last_pause() -> None:
    pauses, send = Pauses(), Tries(*(errors.KubeUnavailable(str(i)) for i in range(9)))
    policy = RetryPolicy(backoffs=(0.5, 1.0, 2.0))
    with pytest.raises(errors.KubeUnavailable, match=r"^3$"):
        await policy.resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=not_landed)
    assert (send.sent, pauses.waited) == (4, [0.5, 1.0, 2.0])


async def test_without_backoffs_a_failed_write_fails_at_once() -> None:
    pauses, send = Pauses(), Tries(errors.KubeUnavailable("503"))
    with pytest.raises(errors.KubeUnavailable):
        await RetryPolicy().resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=not_landed)
    assert (send.sent, pauses.waited, pauses.warned) == (1, [], [])


@pytest.mark.parametrize(
    "refusal",
    [errors.KubeForbidden("403"), errors.KubeInvalid("422"), StateUnavailable("gone")],
    ids=["forbidden", "invalid", "unavailable"],
)
async def test_a_refused_write_is_not_sent_again(refusal: Exception) -> None:
    pauses, send = Pauses(), Tries(refusal)
    policy = RetryPolicy(backoffs=(0.5,))
    with pytest.raises(type(refusal)):
        await policy.resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=not_landed)
    assert send.sent == 1


async def test_a_conflict_after_a_lost_answer_is_our_own_write_when_it_landed() -> None:
    pauses, send = Pauses(), Tries(errors.KubeWriteUnknown("lost"), StateConflict("409"))

    async def landed() -> str | None:
        return "v7"

    policy = RetryPolicy(backoffs=(0.5,))
    assert await policy.resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=landed) == "v7"


async def test_a_conflict_after_a_lost_answer_stands_when_ours_is_not_what_is_stored() -> None:
    pauses, send = Pauses(), Tries(errors.KubeWriteUnknown("lost"), StateConflict("409"))
    policy = RetryPolicy(backoffs=(0.5,))
    with pytest.raises(StateConflict, match="409"):
        await policy.resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=not_landed)


async def test_a_conflict_on_the_first_try_is_never_taken_for_our_own_write() -> None:
    asked: list[bool] = []

    async def landed() -> str | None:
        asked.append(True)
        return "v7"

    pauses, send = Pauses(), Tries(StateConflict("409"))
    policy = RetryPolicy(backoffs=(0.5,))
    with pytest.raises(StateConflict):
        await policy.resend(send, sleep=pauses.sleep, warn=pauses.warn, landed=landed)
    assert asked == []
