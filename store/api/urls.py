from django.urls import path

from store.api import views

urlpatterns = [
    path("store/products", views.ProductsApi.as_view(), name="store-products"),
    path(
        "store/apple/transactions",
        views.AppleTransactionsApi.as_view(),
        name="store-apple-transactions",
    ),
    path(
        "store/apple/notifications",
        views.AppleNotificationsApi.as_view(),
        name="store-apple-notifications",
    ),
    path(
        "store/google/purchases", views.GooglePurchasesApi.as_view(), name="store-google-purchases"
    ),
    path(
        "store/google/notifications",
        views.GoogleNotificationsApi.as_view(),
        name="store-google-notifications",
    ),
]
