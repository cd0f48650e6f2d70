// Chips: the balance in the header, the daily bonus, and the wallet page (#/wallet) with the
// wallet's entries, newest first (GET /me/wallet/entries, a cursor per page).

import { api, ApiError } from "./api.js";
import { clear, h, say } from "./dom.js";
import { formatDateTime, formatNumber, t, tn } from "./i18n.js";

const CAUSES = {
  signup_grant: () => t("Sign-up grant"),
  daily_bonus: () => t("Daily bonus"),
  buy_in: () => t("Buy-in (into the table's escrow)"),
  payout: () => t("Match settled"),
  refund: () => t("Refund (match aborted)"),
  adjustment: () => t("Adjustment"),
  account_deleted: () => t("Account deleted"),
};

/** "1,000 chips", "1 chip", in the page's language. */
export function chips(n) {
  return tn("{count} chip", "{count} chips", Math.abs(n), { count: formatNumber(n) });
}

function signed(n) {
  return formatNumber(n, { signDisplay: "exceptZero" });
}

/** The header's balance: a link to the wallet page, refreshed on every screen and settlement. */
export async function refreshBalance() {
  const el = document.getElementById("balance");
  if (!el) return null;
  try {
    const wallet = await api.wallet();
    el.textContent = chips(wallet.balance);
    el.dataset.balance = wallet.balance;
    el.dataset.available = wallet.available;
    el.setAttribute("aria-label", t("Your chips: {chips} ({in_play} in play). Open your wallet",
      { chips: chips(wallet.balance), in_play: formatNumber(wallet.in_play) }));
    return wallet;
  } catch {
    return null; // the screen itself reports a failed session
  }
}

/** The daily bonus: a button when it may be claimed, else when the next one comes. */
export function bonusButton(wallet, onClaimed) {
  const bonus = (wallet && wallet.daily_bonus) || {};
  if (!bonus.amount) return null;
  if (!bonus.available) {
    return h("p", { "data-testid": "daily-bonus-claimed" },
      t("Daily bonus claimed; the next one from {when}.", { when: formatDateTime(bonus.next_at) }));
  }
  return h("button", {
    type: "button",
    "data-testid": "daily-bonus",
    onclick: async () => {
      try {
        const body = await api.claimDaily();
        say(tn("Daily bonus: {amount} chip.", "Daily bonus: {amount} chips.",
          Math.abs(body.entry.amount), { amount: signed(body.entry.amount) }));
        await refreshBalance();
        if (onClaimed) onClaimed(body.wallet);
      } catch (err) {
        if (err instanceof ApiError && err.code === "already_claimed") {
          say(t("Already claimed today: the next bonus from {when}.",
            { when: formatDateTime(err.body.next_at) }), true);
        } else say(err.message, true);
      }
    },
  }, t("Claim the daily bonus ({chips})", { chips: chips(bonus.amount) }));
}

function entryRow(entry) {
  let what = CAUSES[entry.cause] ? CAUSES[entry.cause]() : entry.cause;
  const result = entry.match_result;
  if (entry.cause === "payout" && typeof result === "number") {
    what = result > 0 ? t("Match settled (you won {chips})", { chips: chips(result) }) :
      result < 0 ? t("Match settled (you lost {chips})", { chips: chips(-result) }) :
        t("Match settled (even)");
  }
  return h("tr", { "data-testid": "wallet-entry", "data-cause": entry.cause,
    "data-amount": entry.amount },
  h("td", {}, formatDateTime(entry.created_at)),
  h("td", {}, entry.reason ? t("{what}: {reason}", { what, reason: entry.reason }) : what),
  h("td", { class: entry.amount < 0 ? "minus" : "plus" }, signed(entry.amount)),
  h("td", {}, formatNumber(entry.balance_after)),
  h("td", {}, entry.game_id ? h("a", { href: `#/table/${entry.game_id}` }, t("the match")) :
    ""));
}

export async function walletScreen(root, route, ctx) {
  const summary = h("section", { class: "panel", "aria-labelledby": "wallet-title" });
  const body = h("tbody", {});
  const more = h("p", {});
  const entries = h("section", { class: "panel", "aria-labelledby": "entries-title" },
    h("h2", { id: "entries-title" }, t("Entries")),
    h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": t("Wallet entries") },
      h("table", { "data-testid": "wallet-entries" },
        h("thead", {}, h("tr", {}, h("th", {}, t("When")), h("th", {}, t("What")),
          h("th", {}, t("Chips")), h("th", {}, t("Balance after")), h("th", {}, t("Match")))),
        body)),
    more);
  root.append(h("h1", { id: "wallet-title" }, t("Your chips")), summary, entries);

  function drawSummary(wallet) {
    const listed = h("input", { type: "checkbox", id: "wallet-listed", checked: wallet.listed,
      "data-testid": "wallet-listed" });
    listed.addEventListener("change", async () => {
      try {
        drawSummary(await api.setListed(listed.checked));
      } catch (err) {
        ctx.handleError(err);
      }
    });
    clear(summary).append(
      h("p", { class: "big", "data-testid": "wallet-balance", "data-balance": wallet.balance },
        chips(wallet.balance)),
      h("p", {}, t("{available} available, {in_play} in play (in the escrow of matches not " +
        "settled yet).", { available: chips(wallet.available), in_play: chips(wallet.in_play) })),
      bonusButton(wallet, (after) => drawSummary(after)),
      h("p", {}, listed, " ", h("label", { for: "wallet-listed" },
        t("Show my chips on the leaderboard"))),
    );
  }

  async function page(next) {
    const answer = await api.walletEntries(next);
    body.append(...(answer.results || []).map(entryRow));
    clear(more);
    if (answer.next) {
      more.append(h("button", { type: "button", "data-testid": "wallet-more",
        onclick: () => page(answer.next).catch(ctx.handleError) }, t("Older entries")));
    }
  }

  const wallet = await api.wallet();
  drawSummary(wallet);
  await page(null);
  refreshBalance();
}
