"""Staff see tournaments in the admin; writes go through the API's services (cancel refunds)."""

from django.contrib import admin

from tournaments.models import Registration, Table, Tournament


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "size", "buy_in", "fee", "starts_at", "created_at")
    list_filter = ("status",)
    readonly_fields = [f.name for f in Tournament._meta.fields]


@admin.register(Registration)
class RegistrationAdmin(admin.ModelAdmin):
    list_display = ("tournament", "user", "active", "refunded", "created_at")
    readonly_fields = [f.name for f in Registration._meta.fields]


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("tournament", "stage", "index", "game_id", "winner")
    readonly_fields = [f.name for f in Table._meta.fields]
