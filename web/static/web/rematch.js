// The rematch of a finished match (README "Rematch"), for its people: propose it from the
// result, answer a proposal, see each person's answer as it arrives (/me/stream's `rematch`
// frames), and go to the next table once it starts. The state changes only here; the drawing is
// rematch-view.js's.

import { api, ApiError, followMe, session } from "./api.js";
import { say } from "./dom.js";
import { t } from "./i18n.js";
import { renderRematch } from "./rematch-view.js";

// Refusals that only mean the page is behind: show the proposal as it is now instead.
const BEHIND = new Set(["rematch_open", "rematch_closed", "no_rematch", "already_answered"]);

/** Follow the rematch of match `id` into `el`; returns { close() }. */
export function startRematch(el, id, ctx) {
  const state = { id, me: session().username, rematch: null, loaded: false, busy: false };
  let stopped = false;

  const draw = () => {
    if (!stopped) renderRematch(el, state, actions);
  };

  // `live`: it happened while this page looked (a frame, our answer, a catch-up of a proposal
  // we showed open), so a start takes the page to the new table; an old match opened from its
  // address only links to its rematch.
  function take(rematch, live = true) {
    if (stopped || !rematch || rematch.game_id !== id) return;
    const wasOpen = Boolean(state.rematch) && state.rematch.status === "open";
    state.rematch = rematch;
    if (rematch.status === "started" && rematch.next_game_id && (live || wasOpen)) {
      stopped = true;
      notices.close();
      say(t("The rematch starts: to the new table."));
      ctx.go(`#/table/${rematch.next_game_id}`);
      return;
    }
    draw();
  }

  // The table's `rematch` (null before a proposal): no 409 to read when there is none.
  async function reload() {
    const table = await api.table(id);
    state.loaded = true;
    if (table.rematch) take(table.rematch, false);
    else draw();
  }

  const act = (call) => async () => {
    if (state.busy) return;
    state.busy = true;
    draw();
    try {
      const answer = await call();
      state.busy = false;
      take(answer);
    } catch (err) {
      state.busy = false;
      if (err instanceof ApiError && BEHIND.has(err.code)) await reload().catch(ctx.handleError);
      else ctx.handleError(err);
      draw();
    }
  };

  const actions = {
    propose: act(() => api.proposeRematch(id)),
    accept: act(() => api.answerRematch(id, "accept")),
    decline: act(() => api.answerRematch(id, "decline")),
  };

  const notices = followMe({
    // Each (re)connection: what was written before the stream looked is read from the table.
    onOpen: () => reload().catch(() => {}),
    onEvent: (type, data) => {
      if (type === "rematch") take(data);
    },
  });
  draw();
  reload().catch(ctx.handleError);
  return {
    close() {
      stopped = true;
      notices.close();
    },
  };
}
