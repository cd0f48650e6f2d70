"""Fair play in the admin: cases, reports, suspensions and appeals, read-mostly. Decisions are
taken through the staff API (or ``fairplay.services``), which records who and why; the records
here are append-only, so the admin never changes or deletes one."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from fairplay.models import (
    Appeal,
    Case,
    CaseAccount,
    CaseEvent,
    Report,
    Suspension,
    SuspensionLift,
)


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class CaseAccountInline(admin.TabularInline):
    model = CaseAccount
    extra = 0
    can_delete = False
    readonly_fields = ("user", "position")

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


class CaseEventInline(admin.TabularInline):
    model = CaseEvent
    extra = 0
    can_delete = False
    readonly_fields = ("type", "at", "by", "reason", "data")
    fields = readonly_fields

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Case)
class CaseAdmin(ReadOnly):
    list_display = ("id", "kind", "status", "score", "hold", "opened_at", "updated_at")
    list_filter = ("status", "kind", "hold")
    inlines = [CaseAccountInline, CaseEventInline]


@admin.register(Report)
class ReportAdmin(ReadOnly):
    list_display = ("id", "game_id", "seat", "reporter", "reported", "reason", "case", "at")
    list_filter = ("reason",)
    search_fields = ("reporter__username", "reported__username")


class LiftInline(admin.StackedInline):
    model = SuspensionLift
    extra = 0
    can_delete = False
    readonly_fields = ("at", "by", "reason")

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(Suspension)
class SuspensionAdmin(ReadOnly):
    list_display = ("id", "user", "reason", "starts_at", "ends_at", "created_by", "case")
    search_fields = ("user__username",)
    inlines = [LiftInline]


@admin.register(Appeal)
class AppealAdmin(ReadOnly):
    list_display = ("id", "user", "suspension", "case", "at")
    search_fields = ("user__username",)
