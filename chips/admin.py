"""Admin: the ledger read-only, and the one write staff make by hand, an adjustment.

Entries are append-only and balances are their projection (``manage.py rebuild_balances``
rewrites them), so nothing here edits a row: the "Adjust the chips of the selected wallets"
action posts an ``adjustment`` entry per wallet, with its amount and reason, against the house
(``chips.services.adjust``), exactly as ``POST /api/v1/wallets/{username}/adjustments`` does.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from chips import ledger, services
from chips.errors import InsufficientChips, WalletClosed
from chips.models import Account, Entry, Posting
from core.admin import ReadOnlyAdmin


class AdjustmentForm(forms.Form):
    amount = forms.IntegerField(help_text="Chips into (+) or out of (-) each wallet; not 0.")
    reason = forms.CharField(max_length=500, help_text="Kept with the entry for ever.")

    def clean_amount(self) -> int:
        amount = self.cleaned_data["amount"]
        if amount == 0:
            raise forms.ValidationError("An adjustment moves at least one chip.")
        return amount


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "user", "game_id", "chips", "chips_in_play", "listed")
    list_filter = ("kind", "listed")
    search_fields = ("user__username", "game_id")
    list_select_related = ("user", "balance")
    actions = ["adjust"]

    @admin.display(description="chips")
    def chips(self, obj: Account) -> int:
        if obj.kind == Account.Kind.HOUSE:
            return ledger.house_balance()
        return obj.balance.balance

    @admin.display(description="in play")
    def chips_in_play(self, obj: Account) -> int | None:
        return obj.balance.in_play if obj.kind == Account.Kind.WALLET else None

    @admin.action(description="Adjust the chips of the selected wallets (an entry, with a reason)")
    def adjust(self, request: HttpRequest, queryset: QuerySet[Account]) -> HttpResponse | None:
        wallets = list(queryset.filter(kind=Account.Kind.WALLET).select_related("user"))
        if not wallets:
            self.message_user(request, "Select wallets: only they can be adjusted.", messages.ERROR)
            return None
        form = AdjustmentForm(request.POST if "apply" in request.POST else None)
        if not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "title": "Adjust chips",
                "form": form,
                "wallets": wallets,
                "action": "adjust",
                "opts": self.model._meta,
            }
            return TemplateResponse(request, "admin/chips/adjust.html", context)
        amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
        for wallet in wallets:
            try:
                posted, balance = services.adjust(
                    user_id=wallet.user_id, amount=amount, reason=reason, staff_id=request.user.pk
                )
            except (InsufficientChips, WalletClosed) as exc:
                self.message_user(request, f"{wallet.user}: {exc.detail}", messages.ERROR)
                continue
            self.message_user(
                request,
                f"{wallet.user}: {amount:+d} chips (entry {posted.entry_id}); now {balance}.",
                messages.SUCCESS,
            )
        return None


class PostingInline(admin.TabularInline):
    model = Posting
    extra = 0
    can_delete = False
    fields = ("account", "amount", "balance_after")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "cause", "key", "user", "game_id", "reason")
    list_filter = ("cause",)
    search_fields = ("key", "user__username", "game_id", "reason")
    readonly_fields = ("cause", "key", "game_id", "user", "created_by", "reason", "data")
    inlines = [PostingInline]
    date_hierarchy = "created_at"
