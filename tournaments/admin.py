"""Staff see tournaments in the admin; writes go through the API's services (cancel refunds)."""

from django import forms
from django.contrib import admin
from django.db import transaction

from core.errors import DomainError
from tournaments import services
from tournaments.models import Registration, Series, Table, Tournament


class SeriesForm(forms.ModelForm):
    class Meta:
        model = Series
        fields = ["name", "rules", "wins_to_match", "size", "buy_in", "fee", "prizes", "active"]

    def clean(self):
        """The settings must make a tournament: one is created and rolled back to check."""
        data = super().clean()
        trial = Series(**{k: v for k, v in data.items() if k in self.Meta.fields})
        try:
            with transaction.atomic():
                services.series_tournament(trial, trial=True)
                transaction.set_rollback(True)
        except DomainError as exc:
            raise forms.ValidationError(str(exc.detail)) from None
        return data


@admin.register(Series)
class SeriesAdmin(admin.ModelAdmin):
    """A series studios keep open: the loop opens its next tournament whenever none registers."""

    form = SeriesForm
    list_display = ("name", "size", "buy_in", "fee", "active")

    def save_model(self, request, obj, form, change):
        if obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


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
