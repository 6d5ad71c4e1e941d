#version 450
in vec4 v_clip;
in vec2 v_uv;
in vec3 v_normal;
layout(binding = 1) uniform sampler2D reflection;
layout(binding = 2) uniform sampler2D ripples;
layout(location = 0) out vec4 color;
void main() {
    vec2 ndc = v_clip.xy / v_clip.w * 0.5 + 0.5;
    vec2 d = (texture(ripples, v_uv).rg * 2.0 - 1.0) * 0.02;
    vec4 refl = texture(reflection, ndc + d);
    float fres = pow(1.0 - max(v_normal.y, 0.0), 5.0);
    color = mix(vec4(0.0, 0.2, 0.3, 1.0), refl, 0.2 + 0.8 * fres);
}
