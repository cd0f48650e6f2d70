from django.urls import path

from social.api import views

urlpatterns = [
    path("me/friends", views.FriendsApi.as_view(), name="me-friends"),
    path("me/friends/<str:username>", views.FriendApi.as_view(), name="me-friend"),
    path("me/blocks", views.BlocksApi.as_view(), name="me-blocks"),
    path("me/blocks/<str:username>", views.BlockApi.as_view(), name="me-block"),
]
