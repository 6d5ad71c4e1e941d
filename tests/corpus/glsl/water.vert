#version 450
// Animated water: Gerstner-like waves in the VS, reflection coordinates out.
layout(location = 0) in vec2 a_grid;
layout(binding = 0) uniform Water { mat4 view_proj; vec4 waves[3]; float time; } w;
out vec4 v_clip;
out vec2 v_uv;
out vec3 v_normal;
void main() {
    vec3 p = vec3(a_grid.x, 0.0, a_grid.y);
    vec3 n = vec3(0.0, 1.0, 0.0);
    for (int i = 0; i < 3; ++i) {
        float ph = dot(w.waves[i].xy, a_grid) + w.time * w.waves[i].w;
        p.y += w.waves[i].z * sin(ph);
        n.xz -= w.waves[i].xy * w.waves[i].z * cos(ph);
    }
    v_clip = w.view_proj * vec4(p, 1.0);
    v_uv = a_grid * 0.05;
    v_normal = normalize(n);
    gl_Position = v_clip;
}
