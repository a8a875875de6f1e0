"""The transaction market (product-choice game): a seller picks a quality, a buyer at the same
time an offer.

ALIGN's market testbed (Zhu et al., arXiv 2602.07777; docs/protocol/gossip.md#testbeds), a
product-choice game: low quality dominates for the seller, so the stage equilibrium is (L, s)
= (1, 1) while (H, c) = (2, 3) is cooperative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from coopeval.games.parameters import param


@dataclass(frozen=True)
class ProductChoiceMarket:
    """A seller chooses quality ``H`` or ``L``; a buyer simultaneously buys the costly offer
    ``c``, the cheap offer ``s`` or ``none``. Seller reward = price − cost, buyer reward = value −
    price; no purchase gives (0, 0). At the defaults (seller, buyer): Hc (2, 3), Hs (0, 2),
    Lc (3, 0), Ls (1, 1), none (0, 0).

    Roles are ``seller`` and ``buyer``. Parameters (all units, fixed at the paper's values: no
    config sets them): ``price_c`` 3 and ``price_s`` 1 (prices of the offers), ``cost_h`` 1 and
    ``cost_l`` 0 (the seller's cost of each quality), ``value_hc`` 6, ``value_hs`` 3,
    ``value_lc`` 3, ``value_ls`` 2 (the buyer's value of each quality × offer).
    """

    price_c: float = param(3.0, "units")
    price_s: float = param(1.0, "units")
    cost_h: float = param(1.0, "units")
    cost_l: float = param(0.0, "units")
    value_hc: float = param(6.0, "units")
    value_hs: float = param(3.0, "units")
    value_lc: float = param(3.0, "units")
    value_ls: float = param(2.0, "units")

    roles: ClassVar[tuple[str, str]] = ("seller", "buyer")
    simultaneous: ClassVar[bool] = True  # the buyer chooses without seeing the quality
    seller_actions: ClassVar[tuple[str, str]] = ("H", "L")
    buyer_actions: ClassVar[tuple[str, str, str]] = ("c", "s", "none")

    def payoff(self, quality: str, choice: str) -> tuple[float, float]:
        """(seller reward, buyer reward), units, for quality ∈ {H, L} and choice ∈ {c, s, none}.

        Raises
        ------
        ValueError
            Unknown action.
        """
        if quality not in self.seller_actions or choice not in self.buyer_actions:
            raise ValueError(f"unknown market actions {quality!r}, {choice!r}")
        if choice == "none":
            return 0.0, 0.0
        price = self.price_c if choice == "c" else self.price_s
        cost = self.cost_h if quality == "H" else self.cost_l
        value = {
            ("H", "c"): self.value_hc,
            ("H", "s"): self.value_hs,
            ("L", "c"): self.value_lc,
            ("L", "s"): self.value_ls,
        }[(quality, choice)]
        return price - cost, value - price
